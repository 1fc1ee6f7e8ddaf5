"""Security events: what the abuse detectors saw, one row per noteworthy request or login.

``kind`` names the detector (``login_failure``, ``malicious_request``, ``flood``, ``api_abuse``,
``stream_abuse``) or ``auto_ban`` when a detector banned the address. The Security Center's
Traffic and Malicious Logins tabs read this table; the automatic-ban detectors write it.
"""

from sqlalchemy import Column, Index, Integer, String, Table, Text

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
