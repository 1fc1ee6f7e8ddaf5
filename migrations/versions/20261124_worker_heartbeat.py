"""The leading worker's heartbeat, shown on the status page.

Revision ID: 20261124_worker_heartbeat
Revises: 20261124_alert_signature
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_worker_heartbeat"
down_revision: str | None = "20261124_alert_signature"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "worker_heartbeat",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("leader_since", UTCDateTime(), nullable=False),
        sa.Column("beat_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_worker_heartbeat_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_heartbeat")),
    )


def downgrade() -> None:
    op.drop_table("worker_heartbeat")
