"""Ban list and allowlist: the ip_filters table (its source column comes in the next revision).

Revision ID: 20261121_ip_filters
Revises: 20261121_zone_catalog
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261121_ip_filters"
down_revision: str | None = "20261121_zone_catalog"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ip_filters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("value", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("active", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("reason", sa.String(255), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.CheckConstraint("kind IN ('blocklist', 'allowlist')", name=op.f("ck_ip_filters_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ip_filters")),
        sa.UniqueConstraint("kind", "value", name=op.f("uq_ip_filters_kind_value")),
    )


def downgrade() -> None:
    op.drop_table("ip_filters")
