"""One request-log index on time and address (``ts, client_ip``) instead of one on each.

The index on the address alone took each new row's entry to a random page: a batch of rows
dirtied pages all over it, each written again at its transaction's commit. An import of a large
access log spent about a quarter of its writing there. Entries of ``ts, client_ip`` go in at
the end, as the rows do. Queries by time use it as they used the index on ``ts``; a drill-down
to one address reads the address from the index over the period's entries; the privacy tools
and the host-name backfill find an address's rows from its first time on
(``docs/decisions.md``).

Revision ID: 20261128_traffic_ts_ip_index
Revises: 20261124_traffic_daily_rollups
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261128_traffic_ts_ip_index"
down_revision: str | None = "20261124_traffic_daily_rollups"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_web_request_logs_ts_client_ip", "web_request_logs", ["ts", "client_ip"])
    op.drop_index("ix_web_request_logs_ts", table_name="web_request_logs")
    op.drop_index("ix_web_request_logs_client_ip", table_name="web_request_logs")


def downgrade() -> None:
    op.create_index("ix_web_request_logs_client_ip", "web_request_logs", ["client_ip"])
    op.create_index("ix_web_request_logs_ts", "web_request_logs", ["ts"])
    op.drop_index("ix_web_request_logs_ts_client_ip", table_name="web_request_logs")
