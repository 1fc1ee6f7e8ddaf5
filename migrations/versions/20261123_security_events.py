"""Security events and automatic-ban settings.

Revision ID: 20261123_security_events
Revises: 20261123_eas_forward
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261123_security_events"
down_revision: str | None = "20261123_eas_forward"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "security_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("occurred_at", UTCDateTime(), nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("method", sa.String(16), nullable=True),
        sa.Column("path", sa.String(512), nullable=True),
        sa.Column("user_agent", sa.String(512), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_security_events")),
    )
    op.create_index(
        "ix_security_events_occurred_at", "security_events", ["occurred_at"], unique=False
    )
    op.create_index("ix_security_events_address", "security_events", ["address"], unique=False)
    op.create_table(
        "autoban_rules",
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("window_seconds", sa.Integer(), nullable=False),
        sa.Column("ban_seconds", sa.Integer(), nullable=False),
        sa.Column("paths", sa.Text(), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("source", name=op.f("pk_autoban_rules")),
    )
    op.create_table(
        "autoban_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("retention_days", sa.Integer(), server_default="30", nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_autoban_settings_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_autoban_settings")),
    )


def downgrade() -> None:
    op.drop_table("autoban_settings")
    op.drop_table("autoban_rules")
    op.drop_index("ix_security_events_address", table_name="security_events")
    op.drop_index("ix_security_events_occurred_at", table_name="security_events")
    op.drop_table("security_events")
