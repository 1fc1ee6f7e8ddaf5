"""The station's boundary and each alert match's reason.

Revision ID: 20261124_station_boundary
Revises: 20261124_operations_settings
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_station_boundary"
down_revision: str | None = "20261124_operations_settings"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "station_boundary",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("geojson", sa.Text(), nullable=False),
        sa.Column("vertex_count", sa.Integer(), nullable=False),
        sa.Column("min_lon", sa.Float(), nullable=False),
        sa.Column("min_lat", sa.Float(), nullable=False),
        sa.Column("max_lon", sa.Float(), nullable=False),
        sa.Column("max_lat", sa.Float(), nullable=False),
        sa.Column("uploaded_by", sa.String(length=64), nullable=True),
        sa.Column("uploaded_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.add_column(
        "cap_alerts",
        sa.Column("match_code", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.add_column(
        "cap_alerts",
        sa.Column("match_geometry", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    # Before this revision every broadcast-area match was by code.
    alerts = sa.table("cap_alerts", sa.column("in_area", sa.Boolean()), sa.column("match_code"))
    op.execute(alerts.update().where(alerts.c.in_area == sa.true()).values(match_code=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("cap_alerts") as batch:
        batch.drop_column("match_geometry")
        batch.drop_column("match_code")
    op.drop_table("station_boundary")
