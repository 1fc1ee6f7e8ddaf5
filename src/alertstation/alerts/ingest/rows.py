"""Rows written by the batch ingest path: driver-level multi-row inserts and the pipeline."""

from __future__ import annotations

import contextlib
import functools
import operator
from collections.abc import Iterator, Sequence
from datetime import datetime
from itertools import chain
from typing import Any

from sqlalchemy import Connection, insert
from sqlalchemy.exc import DBAPIError

from alertstation import lazy
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)

#: Rows per multi-row ``INSERT ... VALUES ... RETURNING`` of new alerts (their 28 columns stay
#: far under the bound-parameter limits of SQLite and PostgreSQL).
_ROWS_PER_INSERT = 500
_ALERT_FIELDS = (
    "sender", "identifier", "sent", "source", "status", "msg_type", "event", "event_code",
    "severity", "urgency", "certainty", "headline", "area_desc", "effective", "onset",
    "expires", "ends", "raw",
)  # fmt: skip
_A = cap_alerts.c
# The writes, built once (building an insert per chunk cost more than running it). The child
# rows' inserts are inline (no key read back): on PostgreSQL they run in ``pipeline``.
INSERT_ALERTS = insert(cap_alerts).returning(_A.id, sort_by_parameter_order=True)
INSERT_CHILDREN = {
    table.name: insert(table).inline()
    for table in (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue)
}

psycopg = lazy.module("psycopg")


class _RowInsert:
    """Insert rows given as tuples in ``columns`` order through the driver, bound as SQLAlchemy
    binds them.

    SQLAlchemy's executemany builds and processes a parameter dict per row; here each column's
    bind processor (the one SQLAlchemy itself would use on this dialect) runs once per distinct
    value, and the driver gets plain tuples. The stored values are the same as an ``insert()``
    of the same rows stores (``tests/alerts/test_bulk_writes.py`` compares them column by column).
    """

    def __init__(self, table: Any, columns: Sequence[str], dialect: Any) -> None:
        self._quote = quote = dialect.identifier_preparer.quote
        self._names = [quote(c) for c in columns]
        self.width = len(columns)
        self.mark = "?" if dialect.paramstyle == "qmark" else "%s"
        self.head = f"INSERT INTO {quote(table.name)} ({', '.join(self._names)}) "
        self.row = "(" + ", ".join([self.mark] * self.width) + ")"
        self.processors = [
            (i, processor)
            for i, name in enumerate(columns)
            for processor in [table.c[name].type.dialect_impl(dialect).bind_processor(dialect)]
            if processor is not None
        ]

    def bound(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows with every value passed through its column's bind processor."""
        if not self.processors:
            return rows
        columns = [list(column) for column in zip(*rows, strict=True)] if rows else []
        for i, processor in self.processors:
            # A batch repeats its times, flags and NULLs: each such value is bound once per
            # column (a bool is never looked up as the int equal to it: other types skip this).
            seen: dict[Any, Any] = {}
            values = columns[i]
            for j, value in enumerate(values):
                if value is None or type(value) in _BOUND_ONCE:
                    done = seen.get(value, _MISSING)
                    if done is _MISSING:
                        done = seen[value] = processor(value)
                    values[j] = done
                else:
                    values[j] = processor(value)
        return list(zip(*columns, strict=True))

    def many(self, conn: Connection, rows: list[tuple[Any, ...]]) -> None:
        """Insert ``rows`` with the driver's executemany."""
        if rows:
            conn.exec_driver_sql(f"{self.head}VALUES {self.row}", self.bound(rows))

    def returning_ids(
        self, conn: Connection, rows: list[tuple[Any, ...]], key: tuple[int, int]
    ) -> list[int]:
        """Insert ``rows`` in multi-row statements; return their new ids in row order.

        ``key`` names the positions of two text columns that tell the rows apart (an alert's
        sender and identifier, unique within a batch); each statement returns them with the id,
        so no order of returned rows is assumed.
        """
        first, second = key
        names = f"{self._quote('id')}, {self._names[first]}, {self._names[second]}"
        ids: list[int] = []
        bound = self.bound(rows)
        for start in range(0, len(bound), _ROWS_PER_INSERT):
            part = bound[start : start + _ROWS_PER_INSERT]
            sql = f"{self.head}VALUES {', '.join([self.row] * len(part))} RETURNING {names}"
            flat = tuple(chain.from_iterable(part))
            found = {(a, b): int(i) for i, a, b in conn.exec_driver_sql(sql, flat)}
            if len(found) != len(part):
                raise ValueError("rows of one insert share their key; cannot tell their ids")
            ids += [found[(row[first], row[second])] for row in part]
        return ids


_MISSING = object()
#: Value types ``_RowInsert.bound`` binds once per distinct value (immutable, hashable, and
#: never equal to a value of another type in the same column: a bool column holds bools).
_BOUND_ONCE = frozenset({datetime, bool})


@functools.lru_cache(maxsize=32)
def row_insert(table_name: str, columns: tuple[str, ...], dialect: Any) -> _RowInsert:
    tables = {t.name: t for t in (cap_alerts, *_CHILD_TABLES)}
    return _RowInsert(tables[table_name], columns, dialect)


def native_writes(conn: Connection) -> bool:
    """Tell whether rows can go through ``_RowInsert`` (a driver whose placeholders it knows)."""
    return conn.dialect.paramstyle in ("qmark", "format", "pyformat")


_CHILD_TABLES = (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue)
ALERT_COLUMNS = (
    *_ALERT_FIELDS, "state", "cancelled_at", "signature_status", "signature_reason", "in_area",
    "stored_area", "match_code", "match_geometry", "explicit", "poll_source_id", "received_at",
    "updated_at",
)  # fmt: skip
_alert_fields = operator.attrgetter(*_ALERT_FIELDS)
#: The fields a message takes from its primary info block, by position in _ALERT_FIELDS.
_INFO_TEXT = frozenset(
    _ALERT_FIELDS.index(name)
    for name in ("event", "event_code", "severity", "urgency", "certainty", "headline", "area_desc")
)


def alert_fields(alert: Any) -> tuple[Any, ...]:
    """The stored header and text fields of an alert; null text when it has no info block."""
    values = _alert_fields(alert)
    if alert.infos:
        return values  # type: ignore[no-any-return]
    return tuple(None if i in _INFO_TEXT and v == "" else v for i, v in enumerate(values))


ALERT_KEY = (ALERT_COLUMNS.index("sender"), ALERT_COLUMNS.index("identifier"))
GEOCODE_COLUMNS = ("alert_id", "code_id", "position", "state", "ended_at", "ended_by")
REF_COLUMNS = ("alert_id", "ref_sender", "ref_identifier", "ref_sent")
VTEC_COLUMNS = (
    "alert_id", "position", "product_class", "action", "office", "phenomenon", "significance",
    "etn", "year", "begin", "end", "chain_terminal",
)  # fmt: skip
QUEUE_COLUMNS = ("alert_id", "event_code", "queued_at", "state", "reason")


@contextlib.contextmanager
def pipeline(conn: Connection) -> Iterator[None]:
    """On PostgreSQL, send the statements run inside in one round trip (psycopg's pipeline).

    Only for statements whose results are not read: the server answers them at the end of the
    block. An error found then is raised as SQLAlchemy's error for it, as ``execute`` would.
    """
    driver = conn.connection.driver_connection if conn.dialect.name == "postgresql" else None
    if driver is None or not _pipeline_supported():
        yield
        return
    try:
        with driver.pipeline():
            yield
    except psycopg.Error as ex:
        raise DBAPIError.instance(None, None, ex, psycopg.Error) from ex


@functools.cache
def _pipeline_supported() -> bool:
    return bool(psycopg.Pipeline.is_supported())
