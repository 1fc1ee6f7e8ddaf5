"""Security events and the automatic-ban settings.

``security_events``: what the abuse detectors saw, one row per noteworthy request or login.
``kind`` names the detector (``login_failure``, ``malicious_request``, ``flood``, ``api_abuse``,
``stream_abuse``) or ``auto_ban`` when a detector banned the address. The Security Center's
Traffic and Malicious Logins tabs read this table; the automatic-ban detectors write it.

``autoban_rules``: one row per detector (``source`` is the ``ip_filters.source`` its bans carry)
with its switch, threshold, window, ban duration and, for the path-based detectors, the paths it
watches. ``autoban_settings``: one row (id 1) with the event retention. Missing rows mean the
defaults (``alertstation.security.autoban.settings``); every save bumps the ``autoban``
generation so each process reloads within about a second.
"""

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

EVENT_KINDS = (
    "login_failure",
    "malicious_request",
    "flood",
    "api_abuse",
    "stream_abuse",
    "auto_ban",
)
AUTOBAN_GENERATION = "autoban"

security_events = Table(
    "security_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("occurred_at", UTCDateTime(), nullable=False),
    Column("address", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("method", String(16), nullable=True),
    Column("path", String(512), nullable=True),
    Column("user_agent", String(512), nullable=True),
    Column("detail", Text, nullable=True),
)
Index("ix_security_events_occurred_at", security_events.c.occurred_at)
Index("ix_security_events_address", security_events.c.address)

autoban_rules = Table(
    "autoban_rules",
    metadata,
    Column("source", String(32), primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("threshold", Integer, nullable=False),
    Column("window_seconds", Integer, nullable=False),
    Column("ban_seconds", Integer, nullable=False),
    Column("paths", Text, nullable=True),
    Column("updated_at", UTCDateTime(), nullable=False),
)

autoban_settings = Table(
    "autoban_settings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("retention_days", Integer, nullable=False, server_default="30"),
    Column("updated_at", UTCDateTime(), nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)
