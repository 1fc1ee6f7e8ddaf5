"""The peak level of each audio source, beside its RMS level, for the meter's peak hold.

Revision ID: 20261129_audio_peak_level
Revises: 20261129_output_health
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_audio_peak_level"
down_revision: str | None = "20261129_output_health"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("audio_sources", sa.Column("peak_dbfs", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audio_sources") as batch:
        batch.drop_column("peak_dbfs")
