"""CAP alert store: alerts, their geocodes and VTEC rows, the forward queue.

Revision ID: 20261122_cap_alerts
Revises: 20261122_ip_filters_source
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261122_cap_alerts"
down_revision: str | None = "20261122_ip_filters_source"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cap_alerts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("sender", sa.String(255), nullable=False),
        sa.Column("identifier", sa.String(255), nullable=False),
        sa.Column("sent", UTCDateTime(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("msg_type", sa.String(16), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("event_code", sa.Text(), nullable=False),
        sa.Column("severity", sa.Text(), nullable=False),
        sa.Column("urgency", sa.Text(), nullable=False),
        sa.Column("certainty", sa.Text(), nullable=False),
        sa.Column("headline", sa.Text(), nullable=False),
        sa.Column("area_desc", sa.Text(), nullable=False),
        sa.Column("effective", UTCDateTime(), nullable=True),
        sa.Column("onset", UTCDateTime(), nullable=True),
        sa.Column("expires", UTCDateTime(), nullable=True),
        sa.Column("ends", UTCDateTime(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("cancelled_at", UTCDateTime(), nullable=True),
        sa.Column("in_area", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("stored_area", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("explicit", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cap_alerts")),
        sa.UniqueConstraint("sender", "identifier", name=op.f("uq_cap_alerts_sender")),
    )
    op.create_index("ix_cap_alerts_state", "cap_alerts", ["state"])
    op.create_table(
        "cap_alert_geocodes",
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("code_id", sa.Integer(), nullable=False),
        _fk("cap_alert_geocodes"),
        sa.PrimaryKeyConstraint("alert_id", "code_id", name=op.f("pk_cap_alert_geocodes")),
    )
    op.create_table(
        "cap_alert_refs",
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("ref_sender", sa.String(255), nullable=False),
        sa.Column("ref_identifier", sa.String(255), nullable=False),
        sa.Column("ref_sent", UTCDateTime(), nullable=False),
        _fk("cap_alert_refs"),
        sa.PrimaryKeyConstraint(
            "alert_id", "ref_sender", "ref_identifier", name=op.f("pk_cap_alert_refs")
        ),
    )
    op.create_index("ix_cap_alert_refs_ref_identifier", "cap_alert_refs", ["ref_identifier"])
    op.create_table(
        "cap_alert_vtec",
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.SmallInteger(), nullable=False),
        sa.Column("product_class", sa.String(1), nullable=False),
        sa.Column("action", sa.String(3), nullable=False),
        sa.Column("office", sa.String(4), nullable=False),
        sa.Column("phenomenon", sa.String(2), nullable=False),
        sa.Column("significance", sa.String(1), nullable=False),
        sa.Column("etn", sa.Integer(), nullable=False),
        sa.Column("year", sa.SmallInteger(), nullable=False),
        sa.Column("begin", UTCDateTime(), nullable=True),
        sa.Column("end", UTCDateTime(), nullable=True),
        sa.Column("chain_terminal", sa.Boolean(), server_default=sa.false(), nullable=False),
        _fk("cap_alert_vtec"),
        sa.PrimaryKeyConstraint("alert_id", "position", name=op.f("pk_cap_alert_vtec")),
    )
    op.create_index(
        "ix_cap_alert_vtec_chain",
        "cap_alert_vtec",
        ["office", "phenomenon", "significance", "etn", "year"],
    )
    op.create_table(
        "alert_settings",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_alert_settings")),
    )
    op.create_table(
        "eas_forward_queue",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("event_code", sa.String(8), nullable=False),
        sa.Column("queued_at", UTCDateTime(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        _fk("eas_forward_queue"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_eas_forward_queue")),
        sa.UniqueConstraint("alert_id", name=op.f("uq_eas_forward_queue_alert_id")),
    )


def _fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["alert_id"],
        ["cap_alerts.id"],
        name=op.f(f"fk_{table}_alert_id_cap_alerts"),
        ondelete="CASCADE",
    )


def downgrade() -> None:
    op.drop_table("eas_forward_queue")
    op.drop_table("alert_settings")
    op.drop_index("ix_cap_alert_vtec_chain", table_name="cap_alert_vtec")
    op.drop_table("cap_alert_vtec")
    op.drop_index("ix_cap_alert_refs_ref_identifier", table_name="cap_alert_refs")
    op.drop_table("cap_alert_refs")
    op.drop_table("cap_alert_geocodes")
    op.drop_index("ix_cap_alerts_state", table_name="cap_alerts")
    op.drop_table("cap_alerts")
