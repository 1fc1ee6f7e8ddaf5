"""Audio sources, audio alerts and received EAS messages.

Revision ID: 20261124_audio_monitoring
Revises: 20261124_worker_heartbeat
Create Date: 2026-11-24
"""

from collections.abc import Sequence

revision: str = "20261124_audio_monitoring"
down_revision: str | None = "20261124_worker_heartbeat"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
