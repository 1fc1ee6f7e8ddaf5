"""The site's own host names, for the self-referrals of an imported access log.

An access log does not say which host a request was sent to, so an imported line's referrer on
the site itself could not be told from an outside one: ``site_hosts`` names them.

Revision ID: 20261129_traffic_site_hosts
Revises: 20261129_alert_code_states
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_traffic_site_hosts"
down_revision: str | None = "20261129_monitoring_assignments"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "traffic_analytics_settings",
        sa.Column("site_hosts", sa.Text(), nullable=False, server_default=sa.text("''")),
    )


def downgrade() -> None:
    with op.batch_alter_table("traffic_analytics_settings") as batch:
        batch.drop_column("site_hosts")
