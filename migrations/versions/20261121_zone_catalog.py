"""Zone catalog: UGC zones by family, applied source files, county FIPS and subdivisions.

Revision ID: 20261121_zone_catalog
Revises: 20261121_sessions_audit
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261121_zone_catalog"
down_revision: str | None = "20261121_sessions_audit"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "wx_zones",
        sa.Column("zone_code", sa.String(16), nullable=False),
        sa.Column("zone_type", sa.String(8), nullable=False),
        sa.Column("state_code", sa.String(8), nullable=False),
        sa.Column("zone_number", sa.String(16), nullable=False),
        sa.Column("cwa", sa.String(16), nullable=False),
        sa.Column("time_zone", sa.String(8), nullable=False),
        sa.Column("fe_area", sa.String(8), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("state_zone", sa.String(16), nullable=False),
        sa.Column("longitude", sa.Float(), nullable=True),
        sa.Column("latitude", sa.Float(), nullable=True),
        sa.Column("short_name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("zone_code", "zone_type", name=op.f("pk_wx_zones")),
    )
    op.create_table(
        "zone_sources",
        sa.Column("family", sa.String(16), nullable=False),
        sa.Column("file_name", sa.String(255), nullable=False),
        sa.Column("file_size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("record_count", sa.Integer(), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=False),
        sa.Column("applied_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("family", name=op.f("pk_zone_sources")),
    )
    op.create_table(
        "county_fips",
        sa.Column("fips", sa.String(5), nullable=False),
        sa.Column("state_code", sa.String(8), nullable=False),
        sa.Column("county_name", sa.Text(), nullable=False),
        sa.Column("cwa", sa.String(16), nullable=False),
        sa.Column("time_zone", sa.String(8), nullable=False),
        sa.Column("fe_area", sa.String(8), nullable=False),
        sa.Column("longitude", sa.Float(), nullable=True),
        sa.Column("latitude", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("fips", name=op.f("pk_county_fips")),
    )
    op.create_table(
        "county_subdivisions",
        sa.Column("same_code", sa.String(6), nullable=False),
        sa.Column("county_fips", sa.String(5), nullable=False),
        sa.Column("part", sa.SmallInteger(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("longitude", sa.Float(), nullable=True),
        sa.Column("latitude", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("same_code", name=op.f("pk_county_subdivisions")),
    )
    op.create_index("ix_county_subdivisions_county_fips", "county_subdivisions", ["county_fips"])


def downgrade() -> None:
    op.drop_index("ix_county_subdivisions_county_fips", table_name="county_subdivisions")
    op.drop_table("county_subdivisions")
    op.drop_table("county_fips")
    op.drop_table("zone_sources")
    op.drop_table("wx_zones")
