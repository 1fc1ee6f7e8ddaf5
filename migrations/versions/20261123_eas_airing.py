"""The EAS airing queue.

Revision ID: 20261123_eas_airing
Revises: 20261123_poll_sources
Create Date: 2026-11-23
"""

from collections.abc import Sequence

revision: str = "20261123_eas_airing"
down_revision: str | None = "20261123_poll_sources"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
