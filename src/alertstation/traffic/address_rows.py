"""Find one address's rows in the request log through its index on time and address.

The request log has one index for both (``ts, client_ip``; an index on the address alone took
each new row's entry to a random page). ``first_time`` walks that index in time order and stops
at the address's first entry; ``of_ip`` then picks the address's rows from that time on, read
from the index rather than by a scan of the table. The privacy tools and the host-name backfill
use them.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Connection, and_, func, select

from alertstation.traffic.tables import web_request_logs

t = web_request_logs


def first_time(conn: Connection, ip: str) -> float | None:
    """Return the time of the first row of ``ip``, or None when it has none."""
    value = conn.execute(select(func.min(t.c.ts)).where(t.c.client_ip == ip)).scalar()
    return float(value) if value is not None else None


def of_ip(ip: str, first: float) -> ColumnElement[bool]:
    """The rows of ``ip``, the first of which is at ``first`` (``first_time``) or later."""
    return and_(t.c.ts >= first, t.c.client_ip == ip)
