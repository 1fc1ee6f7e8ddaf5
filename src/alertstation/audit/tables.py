"""The audit ledger table: one signed, chained row per security-relevant action."""

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

# Rows are never updated or deleted by the application; a row's content is covered by row_hash,
# so nothing here may change after insert (no foreign keys with ON DELETE actions).
audit_logs = Table(
    "audit_logs",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("user_id", Integer, nullable=True),
    Column("username", String(160), nullable=True),  # or "token NAME of USER"
    Column("client_ip", String(45), nullable=True),
    Column("user_agent", String(512), nullable=True),
    Column("action", String(64), nullable=False),
    Column("target", String(255), nullable=True),
    Column("details", Text, nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("row_hash", String(64), nullable=False),
    Index("ix_audit_logs_action_id", "action", "id"),
)
