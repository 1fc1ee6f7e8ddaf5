"""The output-health check's last result for each real airing output (Icecast, ALSA).

Revision ID: 20261129_output_health
Revises: 20261129_traffic_site_hosts
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_output_health"
down_revision: str | None = "20261129_traffic_site_hosts"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eas_output_health",
        sa.Column("name", sa.String(16), primary_key=True, autoincrement=False),
        sa.Column("target", sa.String(300), nullable=False),
        sa.Column("reachable", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("checked_at", UTCDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("eas_output_health")
