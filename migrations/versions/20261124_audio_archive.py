"""The rolling audio archive's status on each source: last error and failure count.

Revision ID: 20261124_audio_archive
Revises: 20261124_station_boundary
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261124_audio_archive"
down_revision: str | None = "20261124_station_boundary"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audio_sources") as batch:
        batch.add_column(sa.Column("archive_error", sa.String(500), nullable=True))
        batch.add_column(
            sa.Column("archive_failures", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("audio_sources") as batch:
        batch.drop_column("archive_failures")
        batch.drop_column("archive_error")
