"""AS numbers as BIGINT, and the request rows dropped, counted across processes.

AS numbers are 32-bit unsigned (up to 4294967295): above 2**31 - 1 an INTEGER column refused
them on PostgreSQL, and the recorder's whole batch with them. ``traffic_counters`` keeps the
request rows the recorders of every process dropped, so ``/api/system_status`` shows the sum.

Revision ID: 20261129_traffic_asn_counters
Revises: 20261128_traffic_error_rows
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_traffic_asn_counters"
down_revision: str | None = "20261128_traffic_error_rows"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def upgrade() -> None:
    # SQLite's INTEGER already holds 64-bit values; rebuilding the request log there (what a
    # batch alter does) would cost a large station minutes for nothing.
    if not _sqlite():
        op.alter_column(
            "web_request_logs",
            "asn",
            existing_type=sa.Integer(),
            type_=sa.BigInteger(),
            existing_nullable=True,
        )
    op.create_table(
        "traffic_counters",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("traffic_counters")
    if not _sqlite():
        op.alter_column(
            "web_request_logs",
            "asn",
            existing_type=sa.BigInteger(),
            type_=sa.Integer(),
            existing_nullable=True,
        )
