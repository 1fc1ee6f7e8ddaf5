"""Insert many rows on SQLite through its C interface: the compiled twin of ``executemany``.

``sqlite3``'s ``executemany`` binds every value through the driver's own machinery, which for a
wide row costs about as much as SQLite's work. The ``sqlite_rows`` kernel
(``src/_native/sqlite_rows.pyx``) binds each value with one C call, on the caller's own
connection and in its transaction: ``register`` gives every SQLite connection opened from then
on an SQL function, ``alertstation_insert_staged(token)``, and ``insert_columns`` stages the rows
and runs it. It loads no second SQLite library (see the kernel's docstring), so a connection
whose SQLite the kernel cannot reach lacks the function; ``available`` tells, and
``alertstation.db.bulk.BulkInsert`` then uses ``executemany``, which stores the same rows
(``tests/db/test_staged_insert.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from alertstation.kernel_loader import load_kernel
from alertstation.settings import native_required

FUNCTION = "alertstation_insert_staged"
_kernel = load_kernel("sqlite_rows")
# Whether a pooled connection has the function, remembered in its ``info``.
_INFO_KEY = "alertstation.staged_insert"


def register() -> bool:
    """Give every SQLite connection opened from now on the kernel's function; return whether
    it could (False without the kernel, or when Python's ``sqlite3`` has a SQLite of its own).
    With ``ALERTSTATION_REQUIRE_NATIVE=1`` that is an error instead."""
    registered = _kernel is not None and bool(_kernel.register())
    if not registered and _kernel is not None and native_required():
        raise ImportError(
            "ALERTSTATION_REQUIRE_NATIVE=1 but alertstation._native.sqlite_rows cannot reach the "
            f"SQLite library of Python's sqlite3 module ({sqlite3.sqlite_version})"
        )
    return registered


def available(conn: Connection) -> bool:
    """Tell whether ``conn`` (SQLite) has the kernel's function: it was opened after
    ``register`` by the SQLite library the kernel uses."""
    info = conn.connection.info
    found = info.get(_INFO_KEY)
    if found is None:
        found = False
        if _kernel is not None and _kernel.registered():
            try:
                conn.connection.dbapi_connection.execute(f"SELECT {FUNCTION}(0)").fetchone()
                found = True
            except sqlite3.OperationalError:  # no such function
                found = False
        info[_INFO_KEY] = found
    return bool(found)


def insert_columns(conn: Connection, sql: str, columns: Sequence[Sequence[Any]]) -> int:
    """Run ``sql`` (an INSERT with one ``?`` for each of ``columns``) once for each row, the
    values given column by column and already converted for the driver; return how many rows
    were inserted. ``conn`` must be ``available``.

    Values are None, bool, int, float, str or bytes (a ``TypeError`` names any other, with its
    column and row); in a transaction, as ``executemany``; outside one, all or none.
    """
    assert _kernel is not None
    count = len(columns[0]) if columns else 0
    token = _kernel.stage(sql, columns, count)
    try:
        added = conn.exec_driver_sql(f"SELECT {FUNCTION}(?)", (token,)).scalar_one()
    finally:
        _kernel.unstage(token)  # raises what stopped the insert while binding, if anything
    return int(added)
