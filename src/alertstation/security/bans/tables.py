"""The ban list and allowlist: one table, ``ip_filters``, the single authority for both.

``value`` is one address or CIDR range in canonical text (``alertstation.security.bantable
.normalise``); ``kind`` is ``blocklist`` or ``allowlist``; ``source`` is one of ``SOURCES`` (the
column was added by its own migration, which backfilled it from ``reason`` and ``description``).
Every change to this table bumps the ``bans`` generation in the same transaction.
"""

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    true,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

BANS_GENERATION = "bans"
BLOCKLIST = "blocklist"
ALLOWLIST = "allowlist"
KINDS = (BLOCKLIST, ALLOWLIST)
MANUAL = "manual"
SSH_BRUTE_FORCE = "ssh_brute_force"
# Stored identifier -> label, in the order the spec lists the labels.
SOURCES = {
    MANUAL: "Manual",
    "login_brute_force": "Login Brute Force",
    SSH_BRUTE_FORCE: "SSH Brute Force",
    "malicious_request": "Malicious Request",
    "flood": "Flood",
    "api_abuse": "API Abuse",
    "stream_abuse": "Stream Abuse",
}
VALUE_WIDTH = 64  # the longest canonical IPv6 range is 43 characters
REASON_WIDTH = 255
DESCRIPTION_MAX = 2000

ip_filters = Table(
    "ip_filters",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("value", String(VALUE_WIDTH), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("active", Boolean, nullable=False, server_default=true()),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("reason", String(REASON_WIDTH), nullable=True),
    Column("description", Text, nullable=True),
    Column("source", String(32), nullable=False, server_default=MANUAL),
    UniqueConstraint("kind", "value", name="uq_ip_filters_kind_value"),
    CheckConstraint("kind IN ('blocklist', 'allowlist')", name="kind"),
)
