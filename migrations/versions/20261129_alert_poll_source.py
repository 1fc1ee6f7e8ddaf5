"""The poll source that delivered a stored alert, for the forwarding rules' ``poll:<id>``.

``cap_alerts`` gains ``poll_source_id``: the id of the poll source whose fetch stored the alert,
null for an alert imported from a file or the command line (and for alerts stored before this
revision, which read as any poll source, ``poll``, as before). No foreign key: an alert keeps the
id of a poll source deleted since, which then matches no rule's ``poll:<id>``.

Revision ID: 20261129_alert_poll_source
Revises: 20261129_alert_code_states
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_alert_poll_source"
down_revision: str | None = "20261129_alert_code_states"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("cap_alerts", sa.Column("poll_source_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite 3.35+): a batch rebuild of cap_alerts would delete the rows
    # hanging on it by ON DELETE CASCADE.
    op.drop_column("cap_alerts", "poll_source_id")
