"""Alert poller sources and their health.

Revision ID: 20261123_poll_sources
Revises: 20261122_hostban
Create Date: 2026-11-23
"""

from collections.abc import Sequence

revision: str = "20261123_poll_sources"
down_revision: str | None = "20261122_hostban"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
