"""Per-code alert state: the codes still in force of each stored alert, in document order.

A VTEC event's state is kept per UGC code (docs/alerts-lifecycle.md): a partial cancel ends
only the codes of its own segment. ``cap_alert_geocodes`` gains each code's place in the
document (``position``: SAME codes first, then UGC, each in document order) and its state
(``state`` active, superseded, cancelled or expired; ``ended_at``; ``ended_by``, the message
that ended it). The alert text columns become nullable, so that a Cancel without an ``info``
block stores its absent fields as null.

Existing rows get their positions from their stored messages and their states by replaying
the stored messages through the lifecycle rules (``alerts.ingest.replay``).

Revision ID: 20261129_alert_code_states
Revises: 20261129_airing_truth
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261129_alert_code_states"
down_revision: str | None = "20261129_airing_truth"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

_TEXT_COLUMNS = ("event", "event_code", "severity", "urgency", "certainty", "headline", "area_desc")
# The tables whose rows hang on cap_alerts by ON DELETE CASCADE, parents first. On SQLite the
# batch rebuild of cap_alerts drops the old table, which with foreign keys on deletes them.
_DEPENDENTS = (
    "cap_alert_geocodes", "cap_alert_refs", "cap_alert_vtec", "eas_forward_queue",
    "eas_forward_airings",
)  # fmt: skip


def _alter_alert_texts(nullable: bool) -> None:
    """Change the text columns' nullability; on SQLite keep the rows of the dependents."""
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        for table in _DEPENDENTS:
            op.execute(sa.text(f"CREATE TEMP TABLE keep_{table} AS SELECT * FROM {table}"))
    with op.batch_alter_table("cap_alerts") as batch:
        for name in _TEXT_COLUMNS:
            batch.alter_column(name, existing_type=sa.Text(), nullable=nullable)
    if sqlite:
        for table in reversed(_DEPENDENTS):
            op.execute(sa.text(f"DELETE FROM {table}"))
        for table in _DEPENDENTS:
            op.execute(sa.text(f"INSERT INTO {table} SELECT * FROM keep_{table}"))
            op.execute(sa.text(f"DROP TABLE keep_{table}"))


def upgrade() -> None:
    _alter_alert_texts(nullable=True)
    with op.batch_alter_table("cap_alert_geocodes") as batch:
        batch.add_column(
            sa.Column("position", sa.SmallInteger(), server_default="0", nullable=False)
        )
        batch.add_column(sa.Column("state", sa.String(16), server_default="active", nullable=False))
        batch.add_column(sa.Column("ended_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("ended_by", sa.Integer(), nullable=True))
    from alertstation.alerts.ingest.replay import replay_store

    replay_store(op.get_bind())


def downgrade() -> None:
    with op.batch_alter_table("cap_alert_geocodes") as batch:
        batch.drop_column("ended_by")
        batch.drop_column("ended_at")
        batch.drop_column("state")
        batch.drop_column("position")
    for name in _TEXT_COLUMNS:
        op.execute(sa.text(f"UPDATE cap_alerts SET {name} = '' WHERE {name} IS NULL"))
    _alter_alert_texts(nullable=False)
