"""The station's boundary and each alert match's reason.

Revision ID: 20261124_station_boundary
Revises: 20261124_operations_settings
Create Date: 2026-11-24
"""

from collections.abc import Sequence

revision: str = "20261124_station_boundary"
down_revision: str | None = "20261124_operations_settings"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
