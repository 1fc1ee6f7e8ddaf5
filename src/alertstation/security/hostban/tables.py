"""Host firewall bridge tables: the settings row and the security log's ledger.

``hostban_settings`` holds one row (id 1). The row may be missing (a fresh database): readers fall
back to ``DEFAULTS`` and the first save inserts it. Paths default to Debian's fail2ban layout;
tests point them at a throwaway directory. ``sudo_mode`` says whether fail2ban commands and file
writes run through ``sudo -n``: ``auto`` (when the service is not root), ``always`` or ``never``.

``hostban_logged`` lists the addresses whose ``ban`` line is the latest line the security log
holds for them (``hostban_log``): the difference with the mirrorable ban list is what the next
log write adds (``ban``) or lifts (``unban``), so each change is logged once by one process.
"""

from sqlalchemy import Boolean, CheckConstraint, Column, Integer, String, Table, false

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

PATH_WIDTH = 255
JAIL_WIDTH = 64
VALUE_WIDTH = 64

DEFAULTS: dict[str, object] = {
    "mirror_enabled": False,
    "ssh_jail_enabled": False,
    "ssh_ban_seconds": 3600,
    "app_jail": "alertstation",
    "ssh_jail": "sshd",
    "config_dir": "/etc/fail2ban",
    "jail_file": "/etc/fail2ban/jail.d/alertstation.conf",
    "filter_file": "/etc/fail2ban/filter.d/alertstation.conf",
    "socket_path": "/var/run/fail2ban/fail2ban.sock",
    "log_file": "/var/log/alertstation-security.log",
    "sudo_mode": "auto",
}
SUDO_MODES = ("auto", "always", "never")

hostban_settings = Table(
    "hostban_settings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("mirror_enabled", Boolean, nullable=False, server_default=false()),
    Column("ssh_jail_enabled", Boolean, nullable=False, server_default=false()),
    Column("ssh_ban_seconds", Integer, nullable=False, server_default="3600"),
    Column("app_jail", String(JAIL_WIDTH), nullable=False, server_default="alertstation"),
    Column("ssh_jail", String(JAIL_WIDTH), nullable=False, server_default="sshd"),
    Column("config_dir", String(PATH_WIDTH), nullable=False, server_default="/etc/fail2ban"),
    Column(
        "jail_file",
        String(PATH_WIDTH),
        nullable=False,
        server_default="/etc/fail2ban/jail.d/alertstation.conf",
    ),
    Column(
        "filter_file",
        String(PATH_WIDTH),
        nullable=False,
        server_default="/etc/fail2ban/filter.d/alertstation.conf",
    ),
    Column(
        "socket_path",
        String(PATH_WIDTH),
        nullable=False,
        server_default="/var/run/fail2ban/fail2ban.sock",
    ),
    Column(
        "log_file",
        String(PATH_WIDTH),
        nullable=False,
        server_default="/var/log/alertstation-security.log",
    ),
    Column("sudo_mode", String(8), nullable=False, server_default="auto"),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)

hostban_logged = Table(
    "hostban_logged",
    metadata,
    Column("value", String(VALUE_WIDTH), primary_key=True),
    Column("source", String(32), nullable=False),
    Column("logged_at", UTCDateTime, nullable=False),
)
