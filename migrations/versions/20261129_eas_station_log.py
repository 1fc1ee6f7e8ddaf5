"""The EAS station log (47 CFR 11.35): ``eas_log``, one row per entry, only ever added.

Revision ID: 20261129_eas_station_log
Revises: 20261129_alert_code_states
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_eas_station_log"
down_revision: str | None = "20261129_alert_poll_source"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eas_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("source", sa.String(64), nullable=True),
        sa.Column("event_code", sa.String(3), nullable=True),
        sa.Column("header", sa.Text(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("result", sa.String(32), nullable=True),
        sa.Column("by", sa.String(64), nullable=True),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("corrects_id", sa.Integer(), sa.ForeignKey("eas_log.id"), nullable=True),
    )
    op.create_index("ix_eas_log_at", "eas_log", ["at"])


def downgrade() -> None:
    op.drop_index("ix_eas_log_at", table_name="eas_log")
    op.drop_table("eas_log")
