"""Audio sources, audio alerts and received EAS messages.

Revision ID: 20261124_audio_monitoring
Revises: 20261124_worker_heartbeat
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_audio_monitoring"
down_revision: str | None = "20261124_worker_heartbeat"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audio_sources",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("command", sa.Text(), server_default="[]", nullable=False),
        sa.Column("device_params", sa.Text(), server_default="{}", nullable=False),
        sa.Column("auth_password", sa.String(1024), nullable=True),
        sa.Column("auth_header", sa.String(1024), nullable=True),
        sa.Column("enabled", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("relay_enabled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("state", sa.String(16), server_default="stopped", nullable=False),
        sa.Column("error_message", sa.String(500), nullable=True),
        sa.Column("level_dbfs", sa.Float(), nullable=True),
        sa.Column("icy_title", sa.String(255), nullable=True),
        sa.Column("last_audio_at", UTCDateTime(), nullable=True),
        sa.Column("state_changed_at", UTCDateTime(), nullable=True),
        sa.Column("restart_generation", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audio_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_audio_sources_name")),
    )
    op.create_table(
        "audio_alerts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("detail", sa.String(500), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.Column("acknowledged_by", sa.String(64), nullable=True),
        sa.Column("acknowledged_at", UTCDateTime(), nullable=True),
        sa.Column("resolved_by", sa.String(64), nullable=True),
        sa.Column("resolved_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["audio_sources.id"],
            name=op.f("fk_audio_alerts_source_id_audio_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audio_alerts")),
    )
    op.create_index("ix_audio_alerts_resolved_at", "audio_alerts", ["resolved_at"])
    op.create_index("ix_audio_alerts_source_id", "audio_alerts", ["source_id"])
    op.create_table(
        "received_eas_messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("header", sa.String(300), nullable=False),
        sa.Column("message_key", sa.String(300), nullable=False),
        sa.Column("event_code", sa.String(3), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("bursts", sa.Integer(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("audio_path", sa.String(255), nullable=True),
        sa.Column("audio_seconds", sa.Float(), nullable=True),
        sa.Column("relay", sa.String(500), nullable=True),
        sa.Column("relay_message_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["audio_sources.id"],
            name=op.f("fk_received_eas_messages_source_id_audio_sources"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_received_eas_messages")),
    )
    op.create_index(
        "ix_received_eas_messages_message_key", "received_eas_messages", ["message_key"]
    )
    op.create_index(
        "ix_received_eas_messages_received_at", "received_eas_messages", ["received_at"]
    )

    op.create_table(
        "audio_settings",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audio_settings")),
    )


def downgrade() -> None:
    op.drop_table("audio_settings")
    op.drop_index("ix_received_eas_messages_received_at", table_name="received_eas_messages")
    op.drop_index("ix_received_eas_messages_message_key", table_name="received_eas_messages")
    op.drop_table("received_eas_messages")
    op.drop_index("ix_audio_alerts_source_id", table_name="audio_alerts")
    op.drop_index("ix_audio_alerts_resolved_at", table_name="audio_alerts")
    op.drop_table("audio_alerts")
    op.drop_table("audio_sources")
