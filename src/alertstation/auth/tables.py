"""Account tables."""

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, String, Table, true

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

# One row per sign-in. The cookie carries a random token; only its SHA-256 is stored.
admin_sessions = Table(
    "admin_sessions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("source_ip", String(45), nullable=False),
    Column("user_agent", String(512), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("ended_at", UTCDateTime, nullable=True),
    Column("ended_reason", String(32), nullable=True),
    Index("ix_admin_sessions_user_id", "user_id"),
    Index("ix_admin_sessions_ended_at", "ended_at"),
)

# The station's password policy: a single row (``id`` 1), absent until first saved, when the
# defaults of ``alertstation.auth.policy`` apply. The operations settings page changes it.
password_policy = Table(
    "password_policy",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("min_length", Integer, nullable=False),
    Column("refuse_username", Boolean, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# API tokens for automation clients. The token itself is shown once; only its HMAC-SHA256
# under the station secret is kept, with its first 8 characters (``ast_`` and 4 more) to tell
# tokens apart. ``scopes`` holds scope names separated by single spaces.
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(64), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("prefix", String(8), nullable=False),
    Column("scopes", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("last_used_ip", String(45), nullable=True),
    Index("ix_api_tokens_user_id", "user_id"),
)
