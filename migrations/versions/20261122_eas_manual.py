"""Manual EAS activations and the aired-message archive.

Revision ID: 20261122_eas_manual
Revises: 20261122_cap_alerts
Create Date: 2026-11-22
"""

from collections.abc import Sequence

revision: str = "20261122_eas_manual"
down_revision: str | None = "20261122_cap_alerts"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
