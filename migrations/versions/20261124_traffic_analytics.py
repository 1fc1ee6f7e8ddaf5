"""The web request log, its rollups and the traffic analytics settings.

Revision ID: 20261124_traffic_analytics
Revises: 20261124_audio_monitoring
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261124_traffic_analytics"
down_revision: str | None = "20261124_audio_monitoring"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_request_logs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("occurred_at", UTCDateTime(), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("status", sa.SmallInteger(), nullable=False),
        sa.Column("response_ms", sa.Float(), nullable=True),
        sa.Column("content_length", sa.BigInteger(), nullable=True),
        sa.Column("client_ip", sa.String(length=64), nullable=False),
        sa.Column("ip_version", sa.SmallInteger(), nullable=False),
        sa.Column("visitor_key", sa.String(length=64), nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=True),
        sa.Column("user_agent", sa.String(length=512), nullable=True),
        sa.Column("referrer", sa.String(length=1024), nullable=True),
        sa.Column("referrer_domain", sa.String(length=255), nullable=True),
        sa.Column("search_engine", sa.String(length=64), nullable=True),
        sa.Column("search_phrase", sa.String(length=255), nullable=True),
        sa.Column("language", sa.String(length=32), nullable=True),
        sa.Column("authenticated", sa.Boolean(), nullable=False),
        sa.Column("page_view", sa.Boolean(), nullable=False),
        sa.Column("file_type", sa.String(length=16), nullable=True),
        sa.Column("browser", sa.String(length=64), nullable=True),
        sa.Column("browser_version", sa.String(length=32), nullable=True),
        sa.Column("os", sa.String(length=64), nullable=True),
        sa.Column("device_type", sa.String(length=16), nullable=True),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("country", sa.String(length=128), nullable=True),
        sa.Column("country_code", sa.String(length=2), nullable=True),
        sa.Column("city", sa.String(length=128), nullable=True),
        sa.Column("region", sa.String(length=128), nullable=True),
        sa.Column("region_code", sa.String(length=8), nullable=True),
        sa.Column("asn", sa.Integer(), nullable=True),
        sa.Column("asn_org", sa.String(length=255), nullable=True),
        sa.Column("screen_resolution", sa.String(length=32), nullable=True),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("import_key", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("import_key"),
    )
    op.create_index("ix_web_request_logs_ts", "web_request_logs", ["ts"])
    op.create_index("ix_web_request_logs_hour", "web_request_logs", ["hour"])
    op.create_index("ix_web_request_logs_visitor_ts", "web_request_logs", ["visitor_key", "ts"])
    op.create_index("ix_web_request_logs_client_ip", "web_request_logs", ["client_ip"])
    op.create_table(
        "traffic_analytics_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("retention_days", sa.Integer(), nullable=False),
        sa.Column("log_api_requests", sa.Boolean(), nullable=False),
        sa.Column("authenticated_only", sa.Boolean(), nullable=False),
        sa.Column("exclude_bots", sa.Boolean(), nullable=False),
        sa.Column("exclude_internal", sa.Boolean(), nullable=False),
        sa.Column("skip_paths", sa.Text(), nullable=False),
        sa.Column("anonymize_ip", sa.Boolean(), nullable=False),
        sa.Column("geoip_database_path", sa.String(length=1024), nullable=True),
        sa.Column("geoip_asn_database_path", sa.String(length=1024), nullable=True),
        sa.Column("resolve_hostnames", sa.Boolean(), nullable=False),
        sa.Column("dashboard_cache", sa.Boolean(), nullable=False),
        sa.Column("anomaly_detection_enabled", sa.Boolean(), nullable=False),
        sa.Column("anomaly_error_rate_pct", sa.Float(), nullable=False),
        sa.Column("anomaly_5xx_threshold", sa.Integer(), nullable=False),
        sa.Column("anomaly_failed_login_threshold", sa.Integer(), nullable=False),
        sa.Column("anomaly_scanner_threshold", sa.Integer(), nullable=False),
        sa.Column("anomaly_spike_factor", sa.Float(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("id = 1", name="single_row"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "web_request_rollups",
        sa.Column("hour", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("page_views", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("visitors", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("hour"),
    )
    op.create_table(
        "traffic_visitors",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("visitor_key", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("visitor_key"),
    )
    op.create_table(
        "traffic_hostnames",
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=True),
        sa.Column("outcome", sa.String(length=8), nullable=False),
        sa.Column("checked_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("ip"),
    )


def downgrade() -> None:
    op.drop_table("traffic_hostnames")
    op.drop_table("traffic_visitors")
    op.drop_table("web_request_rollups")
    op.drop_table("traffic_analytics_settings")
    op.drop_index("ix_web_request_logs_client_ip", table_name="web_request_logs")
    op.drop_index("ix_web_request_logs_visitor_ts", table_name="web_request_logs")
    op.drop_index("ix_web_request_logs_hour", table_name="web_request_logs")
    op.drop_index("ix_web_request_logs_ts", table_name="web_request_logs")
    op.drop_table("web_request_logs")
