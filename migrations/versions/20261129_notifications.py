"""Notifications: channels, notifications and the delivery log; the ENDEC feed's new fields.

``notification_channels`` (apprise URLs and the events each subscribes to), ``notifications``
(one row per piece of news) and ``notification_deliveries`` (the delivery log of channels and
of the decoder-monitor and ENDEC feeds). The ENDEC feed gains ``endec_user``, ``endec_path``
and ``endec_tls``: the decoder-feed settings are one JSON row of ``operations_settings``, so a
saved row gets the three fields with their defaults (no user, the root path, plain HTTP).

Revision ID: 20261129_notifications
Revises: 20261129_alert_code_states
Create Date: 2026-11-29
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_notifications"
down_revision: str | None = "20261129_eas_station_log"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

_NEW_FIELDS = {"endec_user": "", "endec_path": "", "endec_tls": False}


def _feed_fields(add: bool) -> None:
    bind = op.get_bind()
    row = bind.execute(
        sa.text("SELECT data FROM operations_settings WHERE section = 'decoder_feed'")
    ).first()
    if row is None:
        return
    data = json.loads(row.data)
    for name, default in _NEW_FIELDS.items():
        if add:
            data.setdefault(name, default)
        else:
            data.pop(name, None)
    bind.execute(
        sa.text("UPDATE operations_settings SET data = :data WHERE section = 'decoder_feed'"),
        {"data": json.dumps(data, sort_keys=True)},
    )


def upgrade() -> None:
    op.create_table(
        "notification_channels",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.UniqueConstraint("name", name="uq_notification_channels_name"),
    )
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("audio_path", sa.Text(), nullable=True),
        sa.Column("dedupe_key", sa.String(200), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("dedupe_key", name="uq_notifications_dedupe_key"),
    )
    op.create_index("ix_notifications_created_at", "notifications", ["created_at"])
    op.create_table(
        "notification_deliveries",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "notification_id",
            sa.Integer(),
            sa.ForeignKey("notifications.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("channel_id", sa.Integer(), nullable=True),
        sa.Column("feed", sa.String(16), nullable=True),
        sa.Column("payload", sa.Text(), nullable=True),
        sa.Column("target", sa.String(80), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index(
        "ix_notification_deliveries_due",
        "notification_deliveries",
        ["state", "next_attempt_at"],
    )
    op.create_index(
        "ix_notification_deliveries_created_at", "notification_deliveries", ["created_at"]
    )
    _feed_fields(add=True)


def downgrade() -> None:
    _feed_fields(add=False)
    op.drop_index("ix_notification_deliveries_created_at", "notification_deliveries")
    op.drop_index("ix_notification_deliveries_due", "notification_deliveries")
    op.drop_table("notification_deliveries")
    op.drop_index("ix_notifications_created_at", "notifications")
    op.drop_table("notifications")
    op.drop_table("notification_channels")
