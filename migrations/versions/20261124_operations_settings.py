"""Application, hardware, text-to-speech, certificate and decoder-feed settings.

Revision ID: 20261124_operations_settings
Revises: 20261124_traffic_analytics
Create Date: 2026-11-24
"""

from collections.abc import Sequence

revision: str = "20261124_operations_settings"
down_revision: str | None = "20261124_traffic_analytics"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
