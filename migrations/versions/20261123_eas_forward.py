"""Auto-forward of CAP alerts to air and the weekly RWT schedule.

Revision ID: 20261123_eas_forward
Revises: 20261123_eas_airing
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261123_eas_forward"
down_revision: str | None = "20261123_eas_airing"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eas_forward_settings",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("station_id", sa.String(8), nullable=False),
        sa.Column("attention_seconds", sa.Float(), nullable=False),
        sa.Column("nwr_tone", sa.Boolean(), nullable=False),
        sa.Column("include_voice", sa.Boolean(), nullable=False),
        sa.Column("max_age_minutes", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_forward_settings")),
    )
    op.create_table(
        "eas_forward_airings",
        sa.Column("queue_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("claimed_at", UTCDateTime(), nullable=False),
        sa.Column("claimed_by", sa.String(128), nullable=False),
        sa.Column("header", sa.Text(), nullable=True),
        sa.Column("voice", sa.String(16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=True),
        sa.Column("aired_at", UTCDateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["queue_id"],
            ["eas_forward_queue.id"],
            name=op.f("fk_eas_forward_airings_queue_id_eas_forward_queue"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["eas_archive.id"],
            name=op.f("fk_eas_forward_airings_message_id_eas_archive"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("queue_id", name=op.f("pk_eas_forward_airings")),
    )
    op.create_table(
        "eas_rwt_schedule",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("weekday", sa.SmallInteger(), nullable=False),
        sa.Column("time_of_day", sa.String(5), nullable=False),
        sa.Column("time_zone", sa.String(64), nullable=False),
        sa.Column("location_codes", sa.Text(), nullable=False),
        sa.Column("station_id", sa.String(8), nullable=False),
        sa.Column("voice_text", sa.Text(), nullable=False),
        sa.Column("last_slot_at", UTCDateTime(), nullable=True),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_rwt_schedule")),
    )


def downgrade() -> None:
    op.drop_table("eas_rwt_schedule")
    op.drop_table("eas_forward_airings")
    op.drop_table("eas_forward_settings")
