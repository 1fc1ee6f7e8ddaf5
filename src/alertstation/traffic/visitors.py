"""A small integer id per visitor key, so a set of visitors fits in a roaring bitmap."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, func, select
from sqlalchemy.dialects import sqlite

from alertstation import lazy
from alertstation.traffic.tables import traffic_visitors

# Loaded by a PostgreSQL engine; a station on SQLite never needs it.
postgresql = lazy.module("sqlalchemy.dialects.postgresql")

_CHUNK = 500


def visitor_ids(conn: Connection, keys: Iterable[str], *, assign: bool = True) -> dict[str, int]:
    """Return the id of each visitor key, giving new keys one.

    With ``assign`` off nothing is written: a new key gets a passing id above every stored one,
    good for one computation (the live hour is counted this way on each read).
    """
    wanted = sorted(set(keys))
    ids: dict[str, int] = {}
    if not assign:
        query = select(traffic_visitors.c.visitor_key, traffic_visitors.c.id)
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            ids.update(conn.execute(query.where(traffic_visitors.c.visitor_key.in_(chunk))).all())
        next_id = int(conn.execute(select(func.max(traffic_visitors.c.id))).scalar() or 0) + 1
        for key in wanted:
            if key not in ids:
                ids[key] = next_id
                next_id += 1
        return ids
    dialect_insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        query = select(traffic_visitors.c.visitor_key, traffic_visitors.c.id)
        found = dict(conn.execute(query.where(traffic_visitors.c.visitor_key.in_(chunk))).all())
        missing = [key for key in chunk if key not in found]
        if missing:
            stmt = dialect_insert(traffic_visitors).values([{"visitor_key": k} for k in missing])
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["visitor_key"]))
            found.update(
                conn.execute(query.where(traffic_visitors.c.visitor_key.in_(missing))).all()
            )
        ids.update(found)
    return ids
