"""Ban list: add the source column and backfill it from reason and description.

Rows that existed before the column get a source from what they say about themselves, first
rule that matches (case-insensitive):

1. reason ``auto_brute_force`` (SSH-imported bans), or reason/description mentioning ``ssh``
   → ``ssh_brute_force``;
2. reason/description mentioning ``login`` → ``login_brute_force``;
3. ... ``malicious`` → ``malicious_request``; ``flood`` → ``flood``;
4. anything else → ``manual`` (the column default).

Revision ID: 20261122_ip_filters_source
Revises: 20261121_ip_filters
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_ip_filters_source"
down_revision: str | None = "20261121_ip_filters"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

# (source, words that give it away), tried in order; the migration keeps its own copy of these.
_RULES = (
    ("ssh_brute_force", ("ssh",)),
    ("login_brute_force", ("login",)),
    ("malicious_request", ("malicious",)),
    ("flood", ("flood",)),
)


def upgrade() -> None:
    op.add_column(
        "ip_filters",
        sa.Column("source", sa.String(32), server_default="manual", nullable=False),
    )
    filters = sa.table(
        "ip_filters",
        sa.column("reason", sa.String()),
        sa.column("description", sa.Text()),
        sa.column("source", sa.String()),
    )
    reason = sa.func.lower(sa.func.coalesce(filters.c.reason, ""))
    description = sa.func.lower(sa.func.coalesce(filters.c.description, ""))
    whens = [(reason == "auto_brute_force", "ssh_brute_force")]
    for source, words in _RULES:
        for word in words:
            pattern = f"%{word}%"
            whens.append((sa.or_(reason.like(pattern), description.like(pattern)), source))
    op.execute(filters.update().values(source=sa.case(*whens, else_="manual")))


def downgrade() -> None:
    with op.batch_alter_table("ip_filters") as batch:
        batch.drop_column("source")
