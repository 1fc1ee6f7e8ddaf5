"""Tables of the alert poller: configured sources with their health, and ATOM links seen.

``poll_sources`` holds one row per source: what to fetch (``kind``, ``url``, and for the agency
JSON API the ``area`` or ``zones`` it asks for), how often and with which timeouts, the
conditional-GET validators of the last full answer (``etag``, ``last_modified``) and the health
of the last attempt. ``poll_source_links`` remembers, per ATOM source, the SHA-256 of every
linked CAP document already fetched, so a changed feed costs only its new entries.
"""

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    true,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

NAME_WIDTH = 100
URL_WIDTH = 2048
AREA_WIDTH = 255
ERROR_WIDTH = 500
VALIDATOR_WIDTH = 512

poll_sources = Table(
    "poll_sources",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME_WIDTH), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("url", String(URL_WIDTH), nullable=False),
    Column("area", String(AREA_WIDTH), nullable=False),
    Column("zones", Text, nullable=False),
    Column("interval_seconds", Integer, nullable=False, server_default="60"),
    Column("connect_timeout_ms", Integer, nullable=False, server_default="5000"),
    Column("read_timeout_ms", Integer, nullable=False, server_default="15000"),
    Column("enabled", Boolean, nullable=False, server_default=true()),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Conditional GET: the validators of the last complete 200 answer.
    Column("etag", String(VALIDATOR_WIDTH), nullable=True),
    Column("last_modified", String(64), nullable=True),
    # Health of the most recent attempt.
    Column("last_attempt_at", UTCDateTime, nullable=True),
    Column("last_success_at", UTCDateTime, nullable=True),
    Column("last_status", Integer, nullable=True),
    Column("last_error", String(ERROR_WIDTH), nullable=True),
    Column("consecutive_failures", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("last_received", Integer, nullable=False, server_default="0"),
    Column("last_stored", Integer, nullable=False, server_default="0"),
    Column("last_skipped", Integer, nullable=False, server_default="0"),
    Column("last_duration_ms", Integer, nullable=True),
    # When the source last delivered a weekly (RWT) or monthly (RMT) test (monitoring
    # compliance, 47 CFR 11.61).
    Column("last_rwt_at", UTCDateTime, nullable=True),
    Column("last_rmt_at", UTCDateTime, nullable=True),
)

poll_source_links = Table(
    "poll_source_links",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source_id", Integer, ForeignKey("poll_sources.id", ondelete="CASCADE"), nullable=False),
    Column("link_hash", String(64), nullable=False),
    Column("seen_at", UTCDateTime, nullable=False),
    UniqueConstraint("source_id", "link_hash"),
)
