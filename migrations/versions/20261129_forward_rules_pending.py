"""Forwarding rules and the approval queue: ``eas_forward_rules`` and ``eas_pending``.

Received messages gain their acknowledgement (``acknowledged_by``/``_at``), and headers read
exactly but refused under 47 CFR 11.31 are kept in ``received_eas_refused``.

A station upgraded from 2.10 gets rules that reproduce what it did: every audio source whose
relay switch is on relays its messages at once (``audio:<id>``, ``auto``); with auto-forward
on, CAP alerts of the forwarded event list air at once (``poll`` and ``imported``, ``auto``).
Everything else waits for an operator (the default ``manual``): nothing airs on its own that
did not before.

Revision ID: 20261129_forward_rules_pending
Revises: 20261129_station_time_zone
Create Date: 2026-11-29
"""

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_forward_rules_pending"
down_revision: str | None = "20261129_station_time_zone"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    rules_table = op.create_table(
        "eas_forward_rules",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("book", sa.Text, nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "eas_pending",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column(
            "queue_id",
            sa.Integer,
            sa.ForeignKey("eas_forward_queue.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column(
            "received_id",
            sa.Integer,
            sa.ForeignKey("received_eas_messages.id", ondelete="CASCADE"),
            nullable=True,
        ),
        sa.Column("header", sa.Text, nullable=False),
        sa.Column("event_code", sa.String(3), nullable=False),
        sa.Column("audio_path", sa.String(255), nullable=True),
        sa.Column("rule", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("hold_minutes", sa.Integer, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("air_at", UTCDateTime(), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("decided_by", sa.String(64), nullable=True),
        sa.Column("decided_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_eas_pending_state", "eas_pending", ["state"])
    with op.batch_alter_table("received_eas_messages") as batch:
        batch.add_column(sa.Column("acknowledged_by", sa.String(64), nullable=True))
        batch.add_column(sa.Column("acknowledged_at", UTCDateTime(), nullable=True))
    op.create_table(
        "received_eas_refused",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "source_id",
            sa.Integer,
            sa.ForeignKey("audio_sources.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("header", sa.String(300), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_received_eas_refused_received_at", "received_eas_refused", ["received_at"])
    rules = _rules_of_2_10(op.get_bind())
    if rules:
        book = {"rules": rules, "default": {"mode": "manual"}}
        op.bulk_insert(
            rules_table,
            [
                {
                    "id": 1,
                    "book": json.dumps(book),
                    "updated_by": "upgrade",
                    "updated_at": datetime.now(UTC),
                }
            ],
        )


def _rules_of_2_10(conn: sa.Connection) -> list[dict[str, object]]:
    """Return the rules that reproduce a 2.10 station's relay switches and auto-forward."""
    rules: list[dict[str, object]] = []
    relaying = [
        row[0]
        for row in conn.execute(
            sa.text("SELECT id FROM audio_sources WHERE relay_enabled ORDER BY id")
        )
    ]
    if relaying:
        rules.append({"sources": [f"audio:{i}" for i in relaying], "mode": "auto"})
    enabled = conn.execute(
        sa.text("SELECT enabled FROM eas_forward_settings WHERE id = 1")
    ).scalar()
    events_text = conn.execute(
        sa.text("SELECT value FROM alert_settings WHERE key = 'forward_events'")
    ).scalar()
    events = sorted(set(json.loads(events_text))) if events_text else []
    if enabled and events:
        rules.append({"events": events, "sources": ["poll", "imported"], "mode": "auto"})
    return rules


def downgrade() -> None:
    op.drop_index("ix_received_eas_refused_received_at", table_name="received_eas_refused")
    op.drop_table("received_eas_refused")
    with op.batch_alter_table("received_eas_messages") as batch:
        batch.drop_column("acknowledged_at")
        batch.drop_column("acknowledged_by")
    op.drop_index("ix_eas_pending_state", table_name="eas_pending")
    op.drop_table("eas_pending")
    op.drop_table("eas_forward_rules")
