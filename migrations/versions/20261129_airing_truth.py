"""The airing queue tells what aired where: a result per output, and the states that say so.

* ``eas_airing_outputs``: one row per output an item played through (``archive``, ``icecast``,
  ``alsa``, ``relays``) with when it started and ended, ``ok`` and ``error``. The queue's JSON
  ``outputs`` column is moved into it and dropped.
* ``eas_airing_queue.state`` widens to 16 characters for ``archived_only``, ``stopped``,
  ``removed`` and ``interrupted``. Existing rows are told truly: an ``aired`` item that played
  through neither Icecast nor ALSA becomes ``archived_only``; a ``failed`` item the worker left
  on the air becomes ``interrupted``.
* ``archive_only`` (the operator chose to record it without airing), ``stop_requested_at`` and
  ``stop_requested_by`` (Stop).

Revision ID: 20261129_airing_truth
Revises: 20261129_forward_rules_pending
Create Date: 2026-11-29
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_airing_truth"
down_revision: str | None = "20261129_forward_rules_pending"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

REAL_OUTPUTS = ("icecast", "alsa")


def upgrade() -> None:
    queue = sa.table(
        "eas_airing_queue",
        sa.column("id", sa.Integer()),
        sa.column("state", sa.String()),
        sa.column("started_at", UTCDateTime()),
        sa.column("finished_at", UTCDateTime()),
        sa.column("error", sa.Text()),
        sa.column("outputs", sa.Text()),
    )
    conn = op.get_bind()
    # Read the old results first: on SQLite the batch below rebuilds the queue table, and the
    # outputs table is made after it (its rows would go with the old table's drop otherwise).
    old = conn.execute(
        sa.select(
            queue.c.id,
            queue.c.state,
            queue.c.started_at,
            queue.c.finished_at,
            queue.c.error,
            queue.c.outputs,
        )
    ).all()
    with op.batch_alter_table("eas_airing_queue") as batch:
        batch.alter_column("state", existing_type=sa.String(8), type_=sa.String(16))
        batch.add_column(
            sa.Column("archive_only", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("stop_requested_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("stop_requested_by", sa.String(64), nullable=True))
        batch.drop_column("outputs")
    outputs = op.create_table(
        "eas_airing_outputs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("queue_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(16), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("ended_at", UTCDateTime(), nullable=True),
        sa.Column("ok", sa.Boolean(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["queue_id"],
            ["eas_airing_queue.id"],
            name=op.f("fk_eas_airing_outputs_queue_id_eas_airing_queue"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_airing_outputs")),
    )
    op.create_index("ix_eas_airing_outputs_queue_id", "eas_airing_outputs", ["queue_id", "id"])
    relabel = sa.table("eas_airing_queue", sa.column("id", sa.Integer()), sa.column("state"))
    for row in old:
        results = json.loads(row.outputs) if row.outputs else {}
        if row.started_at is not None:
            for name, result in results.items():
                conn.execute(
                    outputs.insert().values(
                        queue_id=row.id,
                        name=str(name)[:16],
                        started_at=row.started_at,
                        ended_at=row.finished_at,
                        ok=bool(result.get("ok")),
                        error=result.get("error"),
                    )
                )
        state = row.state
        if state == "aired" and not any(name in results for name in REAL_OUTPUTS):
            state = "archived_only"
        elif state == "failed" and (row.error or "").startswith("interrupted"):
            state = "interrupted"
        if state != row.state:
            conn.execute(relabel.update().where(relabel.c.id == row.id).values(state=state))


def downgrade() -> None:
    op.drop_index("ix_eas_airing_outputs_queue_id", table_name="eas_airing_outputs")
    op.drop_table("eas_airing_outputs")
    with op.batch_alter_table("eas_airing_queue") as batch:
        batch.add_column(sa.Column("outputs", sa.Text(), nullable=True))
    conn = op.get_bind()
    conn.execute(
        sa.text(
            "UPDATE eas_airing_queue SET state = CASE state "
            "WHEN 'archived_only' THEN 'aired' WHEN 'stopped' THEN 'failed' "
            "WHEN 'removed' THEN 'failed' WHEN 'interrupted' THEN 'failed' ELSE state END"
        )
    )
    with op.batch_alter_table("eas_airing_queue") as batch:
        batch.drop_column("stop_requested_by")
        batch.drop_column("stop_requested_at")
        batch.drop_column("archive_only")
        batch.alter_column("state", existing_type=sa.String(16), type_=sa.String(8))
