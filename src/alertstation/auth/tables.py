"""Account tables."""

from sqlalchemy import Boolean, Column, Integer, String, Table, true

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("username", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),
    Column("role", String(32), nullable=False),
    Column("is_active", Boolean, nullable=False, server_default=true()),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("password_changed_at", UTCDateTime, nullable=False),
    Column("last_login_at", UTCDateTime, nullable=True),
)
