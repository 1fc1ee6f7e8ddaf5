"""Host firewall bridge: how privileged commands run, and the security log's ledger.

Revision ID: 20261124_hostban_privileges
Revises: 20261123_security_events
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_hostban_privileges"
down_revision: str | None = "20261123_security_events"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "hostban_settings",
        sa.Column("sudo_mode", sa.String(8), server_default="auto", nullable=False),
    )
    op.create_table(
        "hostban_logged",
        sa.Column("value", sa.String(64), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("logged_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("value", name=op.f("pk_hostban_logged")),
    )


def downgrade() -> None:
    op.drop_table("hostban_logged")
    with op.batch_alter_table("hostban_settings") as batch:
        batch.drop_column("sudo_mode")
