"""Monitoring compliance: assigned sources, alarms, the RMT relay deadline.

``compliance_settings`` (the days an assigned source may go without a test), the assigned
sources (``compliance_assignments``), the alarms the compliance job raises
(``compliance_alarms``) and one row per Required Monthly Test heard for the station's area
(``rmt_deadlines``). ``poll_sources`` gains when each CAP feed last delivered an RWT and an RMT.

Revision ID: 20261129_monitoring_assignments
Revises: 20261129_alert_code_states
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_monitoring_assignments"
down_revision: str | None = "20261129_notifications"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "compliance_settings",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("silence_days", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compliance_settings")),
    )
    op.create_table(
        "compliance_assignments",
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("assigned_by", sa.String(64), nullable=True),
        sa.Column("assigned_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("source", name=op.f("pk_compliance_assignments")),
    )
    op.create_table(
        "compliance_alarms",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("raised_at", UTCDateTime(), nullable=False),
        sa.Column("cleared_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_compliance_alarms")),
    )
    op.create_index(
        "ix_compliance_alarms_open", "compliance_alarms", ["kind", "source", "cleared_at"]
    )
    op.create_table(
        "rmt_deadlines",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_key", sa.String(300), nullable=False),
        sa.Column("header", sa.String(300), nullable=False),
        sa.Column("received_id", sa.Integer(), nullable=True),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("due_at", UTCDateTime(), nullable=False),
        sa.Column("aired_at", UTCDateTime(), nullable=True),
        sa.Column("met", sa.Boolean(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rmt_deadlines")),
        sa.UniqueConstraint("message_key", name=op.f("uq_rmt_deadlines_message_key")),
    )
    op.create_index("ix_rmt_deadlines_started_at", "rmt_deadlines", ["started_at"])
    op.add_column("poll_sources", sa.Column("last_rwt_at", UTCDateTime(), nullable=True))
    op.add_column("poll_sources", sa.Column("last_rmt_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("poll_sources", "last_rmt_at")
    op.drop_column("poll_sources", "last_rwt_at")
    op.drop_index("ix_rmt_deadlines_started_at", table_name="rmt_deadlines")
    op.drop_table("rmt_deadlines")
    op.drop_index("ix_compliance_alarms_open", table_name="compliance_alarms")
    op.drop_table("compliance_alarms")
    op.drop_table("compliance_assignments")
    op.drop_table("compliance_settings")
