"""CAP alerts: the outcome of the XML-signature check (status and reason) on each alert.

Alerts stored before this revision were never recorded with an outcome. They are backfilled
without re-checking anything (a migration reads no settings, so it has no trust anchors): an
alert whose raw message holds no XML-signature namespace becomes ``unsigned``; one that does
becomes ``failed`` with a reason saying it was never checked. None becomes ``verified``.

Revision ID: 20261124_alert_signature
Revises: 20261124_hostban_privileges
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261124_alert_signature"
down_revision: str | None = "20261124_hostban_privileges"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None

DSIG_NAMESPACE = "http://www.w3.org/2000/09/xmldsig#"
UNSIGNED_REASON = "the message carries no XML signature (stored before signatures were recorded)"
UNCHECKED_REASON = (
    "the message is signed, but it was stored before signature checks were recorded, "
    "so its signature was never checked"
)


def upgrade() -> None:
    op.add_column(
        "cap_alerts",
        sa.Column("signature_status", sa.String(16), server_default="unsigned", nullable=False),
    )
    op.add_column(
        "cap_alerts",
        sa.Column(
            "signature_reason",
            sa.Text(),
            server_default="no signature check recorded",
            nullable=False,
        ),
    )
    alerts = sa.table(
        "cap_alerts",
        sa.column("raw", sa.Text()),
        sa.column("signature_status", sa.String(16)),
        sa.column("signature_reason", sa.Text()),
    )
    signed = alerts.c.raw.contains(DSIG_NAMESPACE, autoescape=True)
    op.execute(
        alerts.update()
        .where(signed)
        .values(signature_status="failed", signature_reason=UNCHECKED_REASON)
    )
    op.execute(
        alerts.update()
        .where(sa.not_(signed))
        .values(signature_status="unsigned", signature_reason=UNSIGNED_REASON)
    )


def downgrade() -> None:
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+), not a batch copy: other tables point at
    # cap_alerts with ON DELETE CASCADE, and dropping the old table in a copy would empty them.
    op.drop_column("cap_alerts", "signature_reason")
    op.drop_column("cap_alerts", "signature_status")
