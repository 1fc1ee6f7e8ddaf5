"""Platform tables that belong to no single domain."""

from sqlalchemy import BigInteger, CheckConstraint, Column, Integer, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

# One row per cache that mirrors a table; every mutation of that table bumps its value.
generations = Table(
    "generations",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# The leading worker's heartbeat: one row, rewritten every few seconds by the leader.
worker_heartbeat = Table(
    "worker_heartbeat",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("leader_since", UTCDateTime, nullable=False),
    Column("beat_at", UTCDateTime, nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)

# Saved settings sections (application, hardware, text-to-speech, decoder feed): one row per
# section, its values as a JSON object, who saved it and when. Checked, defaulted and saved by
# ``alertstation.settings_admin.sections``; it sits here, at the bottom, because domains from
# audit up read their values (audit reads its export window with ``alertstation.audit.window``).
operations_settings = Table(
    "operations_settings",
    metadata,
    Column("section", String(32), primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)
