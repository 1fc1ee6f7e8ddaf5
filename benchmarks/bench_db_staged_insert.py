"""Time the access-log import's insert: the compiled bulk insert against ``executemany``.

``db.staged_insert``: 20,000 request-log rows of the import benchmark's kind (a generated log
read by the import's own reader), inserted by ``BulkInsert.run_columns`` with
``ON CONFLICT (import_key) DO NOTHING`` into a migrated SQLite database with every index, in one
transaction rolled back after each round. Ours binds each value through SQLite's C interface
(``src/_native/sqlite_rows.pyx``, ``alertstation.db.staged_insert``); the peer is ``sqlite3``'s
``executemany``, which the import ran before. Before timing, the rows each way stores are checked
equal, value and storage class.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine

from alertstation.db import staged_insert
from alertstation.db.moments import EpochSeconds
from alertstation.kernel_loader import load_kernel
from alertstation.traffic import importer
from alertstation.traffic.rows import ROW_COLUMNS
from benchmarks.bench_traffic_analytics import fresh_database
from tests.traffic import accesslog

kernel = load_kernel("sqlite_rows")
pytestmark = pytest.mark.skipif(kernel is None, reason="the sqlite_rows kernel is not built")

ROWS = 20_000
INSERT = importer.BatchWriter.INSERT
OCCURRED, TS = ROW_COLUMNS.index("occurred_at"), ROW_COLUMNS.index("ts")


@pytest.fixture(scope="module")
def columns(tmp_path_factory: pytest.TempPathFactory) -> list[list[Any]]:
    """The rows and their import keys, column by column, as the import's writer stores them
    (``occurred_at`` from ``ts``)."""
    rows, keys = accesslog.import_rows(ROWS, tmp_path_factory.mktemp("staged"))
    assert len(rows) == ROWS
    columns = [*map(list, zip(*rows, strict=True)), keys]
    columns[OCCURRED] = EpochSeconds(columns[TS])
    return columns


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, columns: list[list[Any]]) -> Iterator[Engine]:
    """A migrated database, after checking both ways store the same rows."""
    folder = tmp_path_factory.mktemp("staged-db")
    found = []
    for compiled in (True, False):
        made = fresh_database(folder / str(compiled))
        with pytest.MonkeyPatch.context() as patch:
            if not compiled:
                patch.setattr(staged_insert, "available", lambda conn: False)
            found.append(_stored_after(made, columns))
        made.dispose()
    assert found[0] == found[1] and len(found[0]) == ROWS
    made = fresh_database(folder / "timed")
    yield made
    made.dispose()


def _stored_after(engine: Engine, columns: list[list[Any]]) -> list[tuple[Any, ...]]:
    with engine.begin() as conn:
        assert INSERT.run_columns(conn, columns) == ROWS
    read = ", ".join(f"{name}, typeof({name})" for name in INSERT.names)
    with engine.connect() as conn:
        query = f"SELECT {read} FROM web_request_logs ORDER BY id"
        return [tuple(row) for row in conn.exec_driver_sql(query)]


def insert_rolled_back(engine: Engine, columns: list[list[Any]]) -> int:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            return INSERT.run_columns(conn, columns)
        finally:
            transaction.rollback()


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "db.staged_insert"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "sqlite3 executemany"


def test_staged_insert_ours(benchmark: Any, engine: Engine, columns: list[list[Any]]) -> None:
    _label(benchmark, "ours")
    with engine.connect() as conn:
        assert staged_insert.available(conn)
    assert benchmark(insert_rolled_back, engine, columns) == ROWS


def test_staged_insert_peer(
    benchmark: Any, engine: Engine, columns: list[list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _label(benchmark, "peer")
    monkeypatch.setattr(staged_insert, "available", lambda conn: False)
    assert benchmark(insert_rolled_back, engine, columns) == ROWS
