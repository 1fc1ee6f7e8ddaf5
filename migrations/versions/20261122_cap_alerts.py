"""CAP alert store: alerts, their geocodes and VTEC rows, the forward queue.

Revision ID: 20261122_cap_alerts
Revises: 20261122_ip_filters_source
Create Date: 2026-11-22
"""

from collections.abc import Sequence

revision: str = "20261122_cap_alerts"
down_revision: str | None = "20261122_ip_filters_source"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
