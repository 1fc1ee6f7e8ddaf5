"""Manual EAS activations and the aired-message archive.

Revision ID: 20261122_eas_manual
Revises: 20261122_cap_alerts
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261122_eas_manual"
down_revision: str | None = "20261122_cap_alerts"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eas_activations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("event", sa.String(3), nullable=False),
        sa.Column("org", sa.String(3), nullable=False),
        sa.Column("locations", sa.Text(), nullable=False),
        sa.Column("purge", sa.String(4), nullable=False),
        sa.Column("station_id", sa.String(8), nullable=False),
        sa.Column("voice_text", sa.Text(), nullable=True),
        sa.Column("has_audio", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_activations")),
    )
    op.create_table(
        "eas_archive",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("activation_id", sa.Integer(), nullable=True),
        sa.Column("header", sa.Text(), nullable=False),
        sa.Column("wav_path", sa.String(255), nullable=False),
        sa.Column("sample_rate", sa.Integer(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("aired_by", sa.String(64), nullable=True),
        sa.Column("aired_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["activation_id"],
            ["eas_activations.id"],
            name=op.f("fk_eas_archive_activation_id_eas_activations"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_archive")),
    )
    op.create_index("ix_eas_archive_aired_at", "eas_archive", ["aired_at"])


def downgrade() -> None:
    op.drop_index("ix_eas_archive_aired_at", table_name="eas_archive")
    op.drop_table("eas_archive")
    op.drop_table("eas_activations")
