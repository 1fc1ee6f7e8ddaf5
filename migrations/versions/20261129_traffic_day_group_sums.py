"""An index of the daily rollups' group rows by list and value, holding their sums.

A long period's dashboard sums every day's row of each list's values (``traffic.daily``): read
by day, the rows of a 400-day period (about half a million) were sorted by list and value to be
summed, most of that dashboard's time. Read from this index, they come in that order already
and hold what is summed, so the sums are taken as the index is scanned. Entries are built from
the rows already stored.

Revision ID: 20261129_traffic_day_group_sums
Revises: 20261129_api_tokens
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261129_traffic_day_group_sums"
down_revision: str | None = "20261129_api_tokens"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

COLUMNS = ["dimension", "key", "day", "hits", "bytes", "total_ms", "max_ms"]


def upgrade() -> None:
    op.create_index("ix_web_request_day_groups_sums", "web_request_day_groups", COLUMNS)


def downgrade() -> None:
    op.drop_index("ix_web_request_day_groups_sums", table_name="web_request_day_groups")
