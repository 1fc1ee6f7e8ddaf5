"""Insert many rows with one ``executemany``, values given as tuples in a fixed column order.

SQLAlchemy's executemany builds a parameter dict per row and runs every bind processor through
its own machinery; for tens of thousands of rows that costs more than the database's work. A
``BulkInsert`` compiles the statement text once per dialect and applies only the bind processors
the columns have (on SQLite, dates and booleans), so the driver receives ready tuples.

On SQLite, ``run`` and ``run_columns`` hand the converted columns to the compiled twin of
``executemany`` (``alertstation.db.staged_insert``) when the connection has it.

``run``, ``run_columns`` (values given column by column) and ``run_one_statement`` (one
multi-row INSERT) convert column by column, each processor mapped over its column; ``run`` and
``run_columns`` also leave out a column that is None in every row of
the call (and has no default, so leaving it out stores the same NULL). On SQLite two processors
have a column-wide shortcut (``column_converter``) that stores the same values: a column of
booleans (and None) goes to the driver as it is, since ``sqlite3`` binds True and False as the
integers 1 and 0 that the processor makes; a ``UTCDateTime`` in UTC is written with
``datetime.isoformat``, the text the processor's format gives. Any other value takes the
processor. A ``UTCDateTime`` column given to ``run_columns`` as ``EpochSeconds``
(``alertstation.db.moments``) stores the moments those seconds are: on SQLite as their text,
made a minute at a time without a ``datetime`` for each value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Boolean, Connection, Table
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine

from alertstation.db import staged_insert
from alertstation.db.columns import transpose
from alertstation.db.moments import EpochSeconds, Moments, SqliteTexts, sqlite_text
from alertstation.db.types import UTCDateTime

Processor = Callable[[Any], Any]
ColumnConverter = Callable[[Sequence[Any]], Sequence[Any]]
_BOOLEAN_VALUES = frozenset({bool, type(None)})


def column_converter(
    type_: TypeEngine[Any], dialect: Dialect, processor: Processor
) -> ColumnConverter:
    """Return what converts a whole column of ``type_`` for ``dialect``: ``processor`` mapped
    over it, or on SQLite a shortcut for booleans and ``UTCDateTime`` storing the same values."""
    if dialect.name == "sqlite" and isinstance(type_, Boolean):
        return lambda column: (
            column if set(map(type, column)) <= _BOOLEAN_VALUES else list(map(processor, column))
        )
    if isinstance(type_, UTCDateTime):
        return _moment_converter(dialect, processor)
    return lambda column: list(map(processor, column))


def _moment_converter(dialect: Dialect, processor: Processor) -> ColumnConverter:
    """Convert a ``UTCDateTime`` column, of moments or of ``EpochSeconds``."""
    if dialect.name == "sqlite":
        texts = SqliteTexts()
        return lambda column: (
            list(map(texts, column))
            if type(column) is EpochSeconds
            else [_sqlite_utc_text(value, processor) for value in column]
        )
    moments = Moments()
    return lambda column: list(
        map(processor, map(moments, column) if type(column) is EpochSeconds else column)
    )


def _sqlite_utc_text(value: datetime | None, processor: Processor) -> str | None:
    """The SQLite text of a UTC moment ("2026-11-24 10:00:00.000000"), as ``processor`` gives."""
    if value is not None and value.tzinfo is UTC and type(value) is datetime:
        return sqlite_text(value)
    return processor(value)  # type: ignore[no-any-return]


class BulkInsert:
    """``INSERT INTO table (names) VALUES (...)`` for many rows, optionally skipping rows that
    would break the unique column ``skip_conflicts_on``."""

    def __init__(
        self, table: Table, names: Sequence[str], skip_conflicts_on: str | None = None
    ) -> None:
        self.table = table
        self.names = tuple(names)
        self.skip_conflicts_on = skip_conflicts_on
        self._compiled: dict[str, tuple[str, list[tuple[int, Processor]]]] = {}
        self._converters: dict[str, list[tuple[int, ColumnConverter]]] = {}
        self._statements: dict[tuple[str, tuple[int, ...]], str] = {}
        # Columns that may be left out when they are NULL in every row (nothing else fills them).
        self._omissible = frozenset(
            index
            for index, name in enumerate(self.names)
            if table.c[name].nullable
            and table.c[name].default is None
            and table.c[name].server_default is None
        )

    def _sql(self, dialect: Dialect, indexes: Sequence[int]) -> str:
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        sql = (
            f"INSERT INTO {self.table.name} ({', '.join(self.names[i] for i in indexes)}) "
            f"VALUES ({', '.join([mark] * len(indexes))})"
        )
        if self.skip_conflicts_on is not None:
            sql += f" ON CONFLICT ({self.skip_conflicts_on}) DO NOTHING"
        return sql

    def _for(self, dialect: Dialect) -> tuple[str, list[tuple[int, Processor]]]:
        found = self._compiled.get(dialect.name)
        if found is None:
            sql = self._sql(dialect, range(len(self.names)))
            processors = [
                (index, processor)
                for index, name in enumerate(self.names)
                if (processor := self.table.c[name].type._cached_bind_processor(dialect))
            ]
            found = self._compiled[dialect.name] = (sql, processors)
        return found

    def _column_converters(self, dialect: Dialect) -> list[tuple[int, ColumnConverter]]:
        found = self._converters.get(dialect.name)
        if found is None:
            _, processors = self._for(dialect)
            found = self._converters[dialect.name] = [
                (index, column_converter(self.table.c[self.names[index]].type, dialect, processor))
                for index, processor in processors
            ]
        return found

    def _converted(self, dialect: Dialect, columns: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
        """Return a copy of ``columns`` (one sequence of values for each name), each converted
        for ``dialect``."""
        if len(columns) != len(self.names):
            raise ValueError(f"rows of {len(columns)} values for {len(self.names)} columns")
        columns = list(columns)
        for index, convert in self._column_converters(dialect):
            columns[index] = convert(columns[index])
        return columns

    def run(self, conn: Connection, rows: Sequence[Sequence[Any]]) -> int:
        """Insert ``rows`` (values in ``names`` order) with one ``executemany``; return how many
        were inserted."""
        if not rows:
            return 0
        return self.run_columns(conn, transpose(rows, len(self.names)))

    def run_columns(self, conn: Connection, columns: Sequence[Sequence[Any]]) -> int:
        """Insert the rows whose values ``columns`` holds column by column (``names`` order,
        each as long as the others) with one ``executemany`` (on SQLite, its compiled twin);
        return how many were inserted."""
        count = len(columns[0]) if columns else 0
        if not count:
            return 0
        dialect = conn.dialect
        columns = self._converted(dialect, columns)
        kept = tuple(
            index
            for index, column in enumerate(columns)
            # (a first value that is not None settles it without a scan)
            if index not in self._omissible or column[0] is not None or column.count(None) != count
        ) or (0,)
        sql = self._statements.get((dialect.name, kept))
        if sql is None:
            sql = self._statements[(dialect.name, kept)] = self._sql(dialect, kept)
        chosen = [columns[index] for index in kept]
        if dialect.name == "sqlite" and staged_insert.available(conn):
            return staged_insert.insert_columns(conn, sql, chosen)
        return int(conn.exec_driver_sql(sql, list(zip(*chosen, strict=True))).rowcount)

    def run_one_statement(self, conn: Connection, rows: Sequence[Sequence[Any]]) -> int:
        """Insert ``rows`` as ONE multi-row ``INSERT ... VALUES (...), (...)``; return how many
        were inserted. Keep ``len(rows) * len(names)`` within the driver's parameter limit
        (32,766 on SQLite)."""
        if not rows:
            return 0
        sql, _ = self._for(conn.dialect)
        columns = self._converted(conn.dialect, transpose(rows, len(self.names)))
        values = list(zip(*columns, strict=True))
        head, _, group = sql.partition(" VALUES ")
        group, conflict, tail = group.partition(" ON CONFLICT")
        text = f"{head} VALUES {', '.join([group] * len(values))}"
        if conflict:
            text += conflict + tail
        flat = tuple(value for row in values for value in row)
        return int(conn.exec_driver_sql(text, flat).rowcount)
