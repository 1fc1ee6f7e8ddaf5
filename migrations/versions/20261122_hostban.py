"""Host firewall bridge settings.

Revision ID: 20261122_hostban
Revises: 20261122_eas_manual
Create Date: 2026-11-22
"""

from collections.abc import Sequence

revision: str = "20261122_hostban"
down_revision: str | None = "20261122_eas_manual"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
