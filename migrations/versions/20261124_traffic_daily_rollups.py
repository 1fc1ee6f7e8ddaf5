"""Daily traffic rollups, imported request keys that start with the request's time, and two
request-log indexes fewer (``hour`` and ``visitor_key, ts``: their queries use ``ts``).

``web_request_days`` and ``web_request_day_groups`` hold each complete day's visits and grouped
lists (``alertstation.traffic.daily``); they start empty and are filled on the next read.

An imported line's key was the digest of the line and its occurrence number: random, so each
insert landed on a random page of the unique index, and a large import slowed down as the index
outgrew the cache. Keys now start with the request's epoch second in ten hex digits
(``0069a3f1c2-<digest>:<n>``); existing keys get the same prefix from their row's ``ts``, so a
file imported before still adds nothing when imported again.

Revision ID: 20261124_traffic_daily_rollups
Revises: 20261124_audio_archive
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261124_traffic_daily_rollups"
down_revision: str | None = "20261124_audio_archive"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

_OLD_KEYS = "import_key IS NOT NULL AND import_key NOT LIKE '%-%'"
_NEW_KEYS = "import_key IS NOT NULL AND import_key LIKE '%-%'"


def upgrade() -> None:
    # ``hour`` queries use the ``ts`` index; ``record_screen`` finds a visitor's last 30 minutes
    # by ``ts`` too. Two indexes fewer to keep up on every recorded request.
    op.drop_index("ix_web_request_logs_hour", table_name="web_request_logs")
    op.drop_index("ix_web_request_logs_visitor_ts", table_name="web_request_logs")
    op.create_table(
        "web_request_days",
        sa.Column("day", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("visits", sa.Integer(), nullable=False),
        sa.Column("bounces", sa.Integer(), nullable=False),
        sa.Column("visit_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("day"),
    )
    op.create_table(
        "web_request_day_groups",
        sa.Column("day", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("dimension", sa.String(length=32), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("total_ms", sa.Float(), nullable=True),
        sa.Column("max_ms", sa.Float(), nullable=True),
        sa.Column("visitors", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("day", "dimension", "key"),
    )
    if op.get_bind().dialect.name == "postgresql":
        prefix = "lpad(to_hex(floor(ts)::bigint), 10, '0')"
    else:
        prefix = "printf('%010x', CAST(ts AS INTEGER))"
    op.execute(
        f"UPDATE web_request_logs SET import_key = {prefix} || '-' || import_key WHERE {_OLD_KEYS}"
    )


def downgrade() -> None:
    op.create_index("ix_web_request_logs_hour", "web_request_logs", ["hour"])
    op.create_index("ix_web_request_logs_visitor_ts", "web_request_logs", ["visitor_key", "ts"])
    op.drop_table("web_request_day_groups")
    op.drop_table("web_request_days")
    op.execute(f"UPDATE web_request_logs SET import_key = substr(import_key, 12) WHERE {_NEW_KEYS}")
