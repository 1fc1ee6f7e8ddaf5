"""The web request log, its rollups and the traffic analytics settings.

Revision ID: 20261124_traffic_analytics
Revises: 20261124_audio_monitoring
Create Date: 2026-11-24
"""

from collections.abc import Sequence

revision: str = "20261124_traffic_analytics"
down_revision: str | None = "20261124_audio_monitoring"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
