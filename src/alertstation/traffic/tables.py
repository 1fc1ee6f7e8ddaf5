"""The web request log and the traffic analytics settings.

``web_request_logs``: one row per recorded request (the recorder's middleware or an access-log
import), enriched at capture: the visitor key (an IPv4 address or an IPv6 /64), the user
agent's browser/OS/device/bot, the language, GeoIP location and ASN, the referrer's domain and
search phrase, and whether the request was a page view. ``ts`` (epoch seconds) and ``hour``
(``ts // 3600``) let every report group by time with plain arithmetic on both backends.
``import_key`` is the digest of an imported line, so importing a file twice adds nothing.

``traffic_analytics_settings``: one row (id 1). A missing row means the defaults of
``alertstation.traffic.settings``; every save bumps the ``traffic`` generation so each process
reloads within about a second.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    Text,
    text,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

TRAFFIC_GENERATION = "traffic"
HOUR_SECONDS = 3600


def hour_of_ts(ts: float) -> int:
    """Return the ``hour`` column's value for a ``ts``: whole hours since the epoch."""
    return int(ts // HOUR_SECONDS)


web_request_logs = Table(
    "web_request_logs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("occurred_at", UTCDateTime(), nullable=False),
    Column("ts", Float, nullable=False),
    Column("hour", Integer, nullable=False),
    Column("method", String(16), nullable=False),
    Column("path", String(1024), nullable=False),
    Column("status", SmallInteger, nullable=False),
    Column("response_ms", Float, nullable=True),
    Column("content_length", BigInteger, nullable=True),
    Column("client_ip", String(64), nullable=False),
    Column("ip_version", SmallInteger, nullable=False),
    Column("visitor_key", String(64), nullable=False),
    Column("hostname", String(255), nullable=True),
    Column("user_agent", String(512), nullable=True),
    Column("referrer", String(1024), nullable=True),
    Column("referrer_domain", String(255), nullable=True),
    Column("search_engine", String(64), nullable=True),
    Column("search_phrase", String(255), nullable=True),
    Column("language", String(32), nullable=True),
    Column("authenticated", Boolean, nullable=False),
    Column("page_view", Boolean, nullable=False),
    Column("file_type", String(16), nullable=True),
    Column("browser", String(64), nullable=True),
    Column("browser_version", String(32), nullable=True),
    Column("os", String(64), nullable=True),
    Column("device_type", String(16), nullable=True),
    Column("is_bot", Boolean, nullable=False),
    Column("country", String(128), nullable=True),
    Column("country_code", String(2), nullable=True),
    Column("city", String(128), nullable=True),
    Column("region", String(128), nullable=True),
    Column("region_code", String(8), nullable=True),
    # AS numbers reach 2**32 - 1; SQLite's INTEGER holds 64 bits already.
    Column("asn", BigInteger().with_variant(Integer, "sqlite"), nullable=True),
    Column("asn_org", String(255), nullable=True),
    Column("screen_resolution", String(32), nullable=True),
    Column("source", String(8), nullable=False),
    Column("import_key", String(64), nullable=True, unique=True),
)
# One index for time and address: entries go in at the end, as rows do (an index on the address
# alone takes each to a random page). See migrations/versions/20261128_traffic_ts_ip_index.
Index("ix_web_request_logs_ts_client_ip", web_request_logs.c.ts, web_request_logs.c.client_ip)

# Counters kept across processes (one row each, added to in the writer's transaction):
# ``rows_dropped`` is the request rows the recorders of every process dropped.
traffic_counters = Table(
    "traffic_counters",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

traffic_analytics_settings = Table(
    "traffic_analytics_settings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("retention_days", Integer, nullable=False),
    Column("log_api_requests", Boolean, nullable=False),
    Column("authenticated_only", Boolean, nullable=False),
    Column("exclude_bots", Boolean, nullable=False),
    Column("exclude_internal", Boolean, nullable=False),
    Column("skip_paths", Text, nullable=False),
    Column("anonymize_ip", Boolean, nullable=False),
    Column("geoip_database_path", String(1024), nullable=True),
    Column("geoip_asn_database_path", String(1024), nullable=True),
    Column("resolve_hostnames", Boolean, nullable=False),
    Column("dashboard_cache", Boolean, nullable=False),
    Column("anomaly_detection_enabled", Boolean, nullable=False),
    Column("anomaly_error_rate_pct", Float, nullable=False),
    Column("anomaly_5xx_threshold", Integer, nullable=False),
    Column("anomaly_failed_login_threshold", Integer, nullable=False),
    Column("anomaly_scanner_threshold", Integer, nullable=False),
    Column("anomaly_spike_factor", Float, nullable=False),
    # The site's own host names, one a line (``TrafficSettings.site_hosts``).
    Column("site_hosts", Text, nullable=False, server_default=text("''")),
    Column("updated_at", UTCDateTime(), nullable=False),
    CheckConstraint("id = 1", name="single_row"),
)

# One row per hour that has been rolled up (empty hours too, so the newest row marks how far the
# rollups reach): counts, and the serialized pyroaring bitmap of the ids of its visitors.
web_request_rollups = Table(
    "web_request_rollups",
    metadata,
    Column("hour", Integer, primary_key=True, autoincrement=False),
    Column("hits", Integer, nullable=False),
    Column("page_views", Integer, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("visitors", LargeBinary, nullable=False),
)

# Daily rollups (``alertstation.traffic.daily``): one row per rolled-up day with its visits, and
# per day, list and value (a JSON array of the list's columns) the tallies and visitor bitmap.
web_request_days = Table(
    "web_request_days",
    metadata,
    Column("day", Integer, primary_key=True, autoincrement=False),
    Column("visits", Integer, nullable=False),
    Column("bounces", Integer, nullable=False),
    Column("visit_seconds", Float, nullable=False),
)

web_request_day_groups = Table(
    "web_request_day_groups",
    metadata,
    Column("day", Integer, primary_key=True, autoincrement=False),
    Column("dimension", String(32), primary_key=True),
    Column("key", Text, primary_key=True),
    Column("hits", Integer, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("total_ms", Float, nullable=True),
    Column("max_ms", Float, nullable=True),
    Column("visitors", LargeBinary, nullable=True),
    # The error answers' rows (one per address: ``key`` ["<address>"], ``hits`` their count)
    # hold each (path, status) and how many, as a JSON array of [path, status, count].
    Column("detail", Text, nullable=True),
)

# A long period's sums per list and value are taken as this index is scanned, in that order and
# without reading the rows (``traffic.daily``; migrations/versions/20261129_traffic_day_group_sums).
Index(
    "ix_web_request_day_groups_sums",
    *(
        web_request_day_groups.c[name]
        for name in ("dimension", "key", "day", "hits", "bytes", "total_ms", "max_ms")
    ),
)

# A small integer per visitor key, so an hour's visitors fit in a roaring bitmap.
traffic_visitors = Table(
    "traffic_visitors",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("visitor_key", String(64), nullable=False, unique=True),
)

# Reverse-DNS answers by address: ``found`` with the host name, or ``none`` (no PTR record,
# remembered so it is not asked again). Transient failures leave no row and are retried.
traffic_hostnames = Table(
    "traffic_hostnames",
    metadata,
    Column("ip", String(64), primary_key=True),
    Column("hostname", String(255), nullable=True),
    Column("outcome", String(8), nullable=False),
    Column("checked_at", UTCDateTime(), nullable=False),
)
