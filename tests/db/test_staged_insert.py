"""The compiled bulk insert on SQLite stores what ``executemany`` stores, and fails as it does."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Boolean, Column, Engine, Float, Integer, LargeBinary, MetaData, String, Table
from sqlalchemy.exc import IntegrityError

from alertstation.db import staged_insert
from alertstation.db.bulk import BulkInsert
from alertstation.db.engine import make_engine
from alertstation.kernel_loader import load_kernel
from tests.fuzz.fuzzing import fuzz

kernel = load_kernel("sqlite_rows")
pytestmark = pytest.mark.skipif(kernel is None, reason="the sqlite_rows kernel is not built")

probe = Table(
    "staged_probe",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("key", String(16), nullable=False, unique=True),
    Column("number", Integer, nullable=True),
    Column("real", Float, nullable=True),
    Column("text", String(64), nullable=True),
    Column("flag", Boolean, nullable=True),
    Column("blob", LargeBinary, nullable=True),
)
NAMES = ("key", "number", "real", "text", "flag", "blob")
INSERT = BulkInsert(probe, NAMES, skip_conflicts_on="key")


def probe_engine(folder: Path) -> Engine:
    engine = make_engine(f"sqlite:///{folder / 'staged.db'}")
    probe.metadata.create_all(engine)
    return engine


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = probe_engine(tmp_path)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def fuzz_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = probe_engine(tmp_path_factory.mktemp("fuzz"))
    yield engine
    engine.dispose()


def stored(engine: Engine) -> list[tuple[Any, ...]]:
    """The stored values as SQLite holds them, each with its storage class."""
    read = ", ".join(f'"{name}", typeof("{name}")' for name in NAMES)
    with engine.connect() as conn:
        query = f"SELECT {read} FROM staged_probe ORDER BY id"
        return [tuple(row) for row in conn.exec_driver_sql(query)]


def insert_both_ways(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, batches: list[list[tuple[Any, ...]]]
) -> tuple[tuple[list[int], list[tuple[Any, ...]]], tuple[list[int], list[tuple[Any, ...]]]]:
    """Insert ``batches`` with the kernel, then (the table emptied) with ``executemany``;
    return each way's counts and stored rows."""
    found = []
    for compiled in (True, False):
        with engine.begin() as conn:
            conn.execute(probe.delete())
        counts = []
        with monkeypatch.context() as patch:
            if not compiled:
                patch.setattr(staged_insert, "available", lambda conn: False)
            for batch in batches:
                with engine.begin() as conn:
                    assert staged_insert.available(conn) is compiled
                    counts.append(INSERT.run(conn, batch))
        found.append((counts, stored(engine)))
    return found[0], found[1]


def test_every_kind_of_value_is_stored_as_executemany_stores_it(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = [
        [
            ("a", 0, 0.0, "", False, b""),
            ("b", 2**63 - 1, -1.5e300, "é \U0001f600 and a\x00NUL", True, b"\x00\xff"),
            ("c", -(2**63), float("inf"), "x" * 64, None, None),
            ("d", None, None, None, True, memoryview(b"view")),
        ],
        [("b", 1, 1.0, "taken", True, b""), ("e", 7, 2.5, "new", False, bytearray(b"ba"))],
    ]
    compiled, plain = insert_both_ways(sqlite_engine, monkeypatch, batches)
    assert compiled == plain
    assert compiled[0] == [4, 1]  # "b" was taken: skipped, as ON CONFLICT DO NOTHING says
    text = "é \U0001f600 and a\x00NUL"
    assert compiled[1][1][::2] == ("b", 2**63 - 1, -1.5e300, text, 1, b"\x00\xff")


values = st.tuples(
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.none(), st.floats(allow_nan=False)),
    st.one_of(st.none(), st.text(max_size=20)),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.binary(max_size=20)),
)


@fuzz(150)
@given(drawn=st.lists(st.tuples(st.sampled_from("abcdefgh"), values), max_size=12))
def test_any_rows_are_stored_as_executemany_stores_them(
    fuzz_engine: Engine, drawn: list[tuple[str, tuple[Any, ...]]]
) -> None:
    batch = [(key, *rest) for key, rest in drawn]
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled, plain = insert_both_ways(fuzz_engine, monkeypatch, [batch])
    assert compiled == plain


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (Decimal("1.5"), TypeError, "column 2, row 2: cannot store a Decimal"),
        (2**63, OverflowError, "column 2, row 2"),
    ],
)
def test_a_value_it_cannot_store_names_its_place_and_nothing_is_kept(
    sqlite_engine: Engine, value: Any, error: type[Exception], message: str
) -> None:
    rows = [("a", 1, None, None, None, None), ("b", value, None, None, None, None)]
    with pytest.raises(error, match=message), sqlite_engine.begin() as conn:
        INSERT.run(conn, rows)
    assert stored(sqlite_engine) == []
    with sqlite_engine.begin() as conn:  # the connection goes on working
        assert INSERT.run(conn, rows[:1]) == 1


def test_a_broken_constraint_is_an_integrity_error_as_with_executemany(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [("a", 1, None, None, None, None), (None, 2, None, None, None, None)]
    for compiled in (True, False):
        with monkeypatch.context() as patch:
            if not compiled:
                patch.setattr(staged_insert, "available", lambda conn: False)
            with pytest.raises(IntegrityError, match="NOT NULL"), sqlite_engine.begin() as conn:
                INSERT.run(conn, rows)
        assert stored(sqlite_engine) == []


def test_outside_a_transaction_the_rows_go_in_all_or_none(tmp_path: Path) -> None:
    assert kernel is not None and staged_insert.register()
    conn = sqlite3.connect(tmp_path / "plain.db", isolation_level=None)
    try:
        conn.execute("CREATE TABLE t (n INTEGER NOT NULL)")
        sql = "INSERT INTO t (n) VALUES (?)"
        for column, expected in (([1, 2, 3], 3), ([4, None, 5], None)):
            token = kernel.stage(sql, [column], len(column))
            try:
                added = conn.execute(f"SELECT {staged_insert.FUNCTION}(?)", (token,)).fetchone()
                assert added == (expected,)
            except sqlite3.IntegrityError:
                assert expected is None
            finally:
                kernel.unstage(token)
            assert not conn.in_transaction
        assert [row[0] for row in conn.execute("SELECT n FROM t ORDER BY n")] == [1, 2, 3]
    finally:
        conn.close()


def test_a_station_engine_uses_the_kernel(sqlite_engine: Engine) -> None:
    with sqlite_engine.connect() as conn:
        assert staged_insert.available(conn)
