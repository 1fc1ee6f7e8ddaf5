"""The day rollups keep an address's error answers in one row a day, not one per answer.

``web_request_day_groups`` held a row per day for each (address, path, status) answered with an
error: a scanner trying thousands of paths made thousands of rows a day, each written when the
day was rolled up and read by every dashboard. Each address now has one row a day, its answers
in the new ``detail`` column (a JSON array of [path, status, count]).

The day rollups are emptied here; the next read rolls every complete day up again from the raw
rows (``alertstation.traffic.daily``), as it does after a write to a past day. The hourly
rollups are kept.

Revision ID: 20261128_traffic_error_rows
Revises: 20261128_traffic_ts_ip_index
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261128_traffic_error_rows"
down_revision: str | None = "20261128_traffic_ts_ip_index"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM web_request_day_groups")
    op.execute("DELETE FROM web_request_days")
    op.add_column("web_request_day_groups", sa.Column("detail", sa.Text(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM web_request_day_groups")
    op.execute("DELETE FROM web_request_days")
    with op.batch_alter_table("web_request_day_groups") as batch:
        batch.drop_column("detail")
