"""Privacy tools: purge one address's rows, anonymize one address, empty the whole log; and
the client beacon's screen resolution.

Each keeps the rollups honest (the hours touched are rolled up again) and bumps the
``traffic_rows`` generation so no cached dashboard shows the old rows. Settings and the GeoIP
databases are never touched.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from alertstation.errors import Invalid
from alertstation.traffic import addresses, rollups
from alertstation.traffic.address_rows import first_time, of_ip
from alertstation.traffic.maintenance import rows_changed
from alertstation.traffic.tables import (
    hour_of_ts,
    traffic_hostnames,
    traffic_visitors,
    web_request_logs,
    web_request_rollups,
)

t = web_request_logs


def check_ip(value: object) -> str:
    """Return the normalized address in ``value``; Invalid otherwise."""
    if not isinstance(value, str) or addresses.parse(value) is None:
        raise Invalid("ip must be one IPv4 or IPv6 address", field="ip")
    return str(addresses.parse(value))


def _forget_hostname(conn: Connection, ip: str) -> None:
    conn.execute(traffic_hostnames.delete().where(traffic_hostnames.c.ip == ip))


def _forget_visitor(conn: Connection, key: str) -> None:
    """Drop the visitor id of ``key`` once no row carries it (its rollups were invalidated)."""
    if conn.execute(select(t.c.id).where(t.c.visitor_key == key).limit(1)).first() is None:
        conn.execute(traffic_visitors.delete().where(traffic_visitors.c.visitor_key == key))


def purge_ip(conn: Connection, ip: str) -> int:
    """Delete every row of ``ip``; return how many."""
    first = first_time(conn, ip)
    if first is None:
        return 0
    deleted = int(conn.execute(t.delete().where(of_ip(ip, first))).rowcount or 0)
    rollups.invalidate_from(conn, hour_of_ts(first))
    _forget_visitor(conn, addresses.visitor_key(ip))
    _forget_hostname(conn, ip)
    rows_changed(conn)
    return deleted


def anonymize_ip(conn: Connection, ip: str) -> int:
    """Mask ``ip`` in its rows (IPv4 /24, IPv6 /48), drop their host names; return how many."""
    first = first_time(conn, ip)
    if first is None:
        return 0
    masked = addresses.mask_address(ip)
    changed = conn.execute(
        t.update()
        .where(of_ip(ip, first))
        .values(client_ip=masked, visitor_key=addresses.visitor_key(masked), hostname=None)
    ).rowcount
    rollups.invalidate_from(conn, hour_of_ts(first))
    _forget_visitor(conn, addresses.visitor_key(ip))
    _forget_hostname(conn, ip)
    rows_changed(conn)
    return int(changed or 0)


def purge_all(conn: Connection) -> int:
    """Empty the request log, its rollups and visitor ids; return the rows deleted."""
    deleted = int(conn.execute(t.delete()).rowcount or 0)
    conn.execute(web_request_rollups.delete())
    conn.execute(traffic_visitors.delete())
    conn.execute(traffic_hostnames.delete())
    rows_changed(conn)
    return deleted


SCREEN_WINDOW = 1800


def record_screen(conn: Connection, visitor: str, screen: str, now: float) -> int:
    """Set the screen resolution on the visitor's rows of the last 30 minutes lacking one."""
    changed = conn.execute(
        t.update()
        .where(
            t.c.visitor_key == visitor,
            t.c.ts >= now - SCREEN_WINDOW,
            t.c.screen_resolution.is_(None),
        )
        .values(screen_resolution=screen[:32])
    ).rowcount
    return int(changed or 0)
