"""The EAS airing queue and the airing outputs' settings.

Revision ID: 20261123_eas_airing
Revises: 20261123_poll_sources
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261123_eas_airing"
down_revision: str | None = "20261123_poll_sources"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eas_airing_queue",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("archive_id", sa.Integer(), nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("enqueued_at", UTCDateTime(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("outputs", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["archive_id"],
            ["eas_archive.id"],
            name=op.f("fk_eas_airing_queue_archive_id_eas_archive"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_airing_queue")),
    )
    op.create_index("ix_eas_airing_queue_state", "eas_airing_queue", ["state", "id"])
    op.create_index("ix_eas_airing_queue_archive_id", "eas_airing_queue", ["archive_id"])
    op.create_table(
        "eas_airing_settings",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("sample_rate", sa.Integer(), nullable=False),
        sa.Column("icecast_enabled", sa.Boolean(), nullable=False),
        sa.Column("icecast_host", sa.String(255), nullable=False),
        sa.Column("icecast_port", sa.Integer(), nullable=False),
        sa.Column("icecast_mount", sa.String(255), nullable=False),
        sa.Column("icecast_username", sa.String(64), nullable=False),
        sa.Column("icecast_password", sa.String(255), nullable=True),
        sa.Column("icecast_tls", sa.Boolean(), nullable=False),
        sa.Column("alsa_enabled", sa.Boolean(), nullable=False),
        sa.Column("alsa_device", sa.String(255), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_airing_settings")),
    )


def downgrade() -> None:
    op.drop_table("eas_airing_settings")
    op.drop_index("ix_eas_airing_queue_archive_id", table_name="eas_airing_queue")
    op.drop_index("ix_eas_airing_queue_state", table_name="eas_airing_queue")
    op.drop_table("eas_airing_queue")
