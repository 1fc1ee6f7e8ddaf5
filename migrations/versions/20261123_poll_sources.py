"""Alert poller sources and their health.

Revision ID: 20261123_poll_sources
Revises: 20261122_hostban
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261123_poll_sources"
down_revision: str | None = "20261122_hostban"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "poll_sources",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("area", sa.String(255), nullable=False),
        sa.Column("zones", sa.Text(), nullable=False),
        sa.Column("interval_seconds", sa.Integer(), server_default="60", nullable=False),
        sa.Column("connect_timeout_ms", sa.Integer(), server_default="5000", nullable=False),
        sa.Column("read_timeout_ms", sa.Integer(), server_default="15000", nullable=False),
        sa.Column("enabled", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("etag", sa.String(512), nullable=True),
        sa.Column("last_modified", sa.String(64), nullable=True),
        sa.Column("last_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("last_success_at", UTCDateTime(), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("last_received", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_stored", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_skipped", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_duration_ms", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_poll_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_poll_sources_name")),
    )
    op.create_table(
        "poll_source_links",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("link_hash", sa.String(64), nullable=False),
        sa.Column("seen_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["poll_sources.id"],
            name=op.f("fk_poll_source_links_source_id_poll_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_poll_source_links")),
        sa.UniqueConstraint("source_id", "link_hash", name=op.f("uq_poll_source_links_source_id")),
    )


def downgrade() -> None:
    op.drop_table("poll_source_links")
    op.drop_table("poll_sources")
