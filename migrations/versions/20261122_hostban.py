"""Host firewall bridge settings.

Revision ID: 20261122_hostban
Revises: 20261122_eas_manual
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from alertstation.db.types import UTCDateTime

revision: str = "20261122_hostban"
down_revision: str | None = "20261122_eas_manual"
branch_labels: Sequence[str] | None = None
depends_on: Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hostban_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mirror_enabled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("ssh_jail_enabled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("ssh_ban_seconds", sa.Integer(), server_default="3600", nullable=False),
        sa.Column("app_jail", sa.String(64), server_default="alertstation", nullable=False),
        sa.Column("ssh_jail", sa.String(64), server_default="sshd", nullable=False),
        sa.Column("config_dir", sa.String(255), server_default="/etc/fail2ban", nullable=False),
        sa.Column(
            "jail_file",
            sa.String(255),
            server_default="/etc/fail2ban/jail.d/alertstation.conf",
            nullable=False,
        ),
        sa.Column(
            "filter_file",
            sa.String(255),
            server_default="/etc/fail2ban/filter.d/alertstation.conf",
            nullable=False,
        ),
        sa.Column(
            "socket_path",
            sa.String(255),
            server_default="/var/run/fail2ban/fail2ban.sock",
            nullable=False,
        ),
        sa.Column(
            "log_file",
            sa.String(255),
            server_default="/var/log/alertstation-security.log",
            nullable=False,
        ),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_hostban_settings_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hostban_settings")),
    )


def downgrade() -> None:
    op.drop_table("hostban_settings")
