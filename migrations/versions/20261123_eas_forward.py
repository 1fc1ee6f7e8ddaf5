"""Auto-forward of CAP alerts to air and the weekly RWT schedule.

Revision ID: 20261123_eas_forward
Revises: 20261123_eas_airing
Create Date: 2026-11-23
"""

from collections.abc import Sequence

revision: str = "20261123_eas_forward"
down_revision: str | None = "20261123_eas_airing"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
