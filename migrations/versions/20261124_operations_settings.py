"""Application, hardware, text-to-speech, certificate and decoder-feed settings.

Revision ID: 20261124_operations_settings
Revises: 20261124_traffic_analytics
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_operations_settings"
down_revision: str | None = "20261124_traffic_analytics"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "password_policy",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("min_length", sa.Integer(), nullable=False),
        sa.Column("refuse_username", sa.Boolean(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "operations_settings",
        sa.Column("section", sa.String(length=32), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("updated_by", sa.String(length=64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("section"),
    )


def downgrade() -> None:
    op.drop_table("operations_settings")
    op.drop_table("password_policy")
