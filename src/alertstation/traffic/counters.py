"""Counters of the traffic package kept in the database, so every process adds to one sum."""

from __future__ import annotations

from sqlalchemy import Connection, select, update
from sqlalchemy.exc import IntegrityError

from alertstation.traffic.tables import traffic_counters

ROWS_DROPPED = "rows_dropped"


def add(conn: Connection, name: str, amount: int) -> None:
    """Add ``amount`` to the counter ``name`` in the caller's transaction (created at 0)."""
    if amount == 0:
        return
    change = (
        update(traffic_counters)
        .where(traffic_counters.c.name == name)
        .values(value=traffic_counters.c.value + amount)
    )
    if conn.execute(change).rowcount:
        return
    try:
        with conn.begin_nested():
            conn.execute(traffic_counters.insert().values(name=name, value=amount))
    except IntegrityError:  # another process created it meanwhile
        conn.execute(change)


def read(conn: Connection, name: str) -> int:
    """Return the counter ``name`` (0 when it was never added to)."""
    query = select(traffic_counters.c.value).where(traffic_counters.c.name == name)
    return int(conn.execute(query).scalar() or 0)
