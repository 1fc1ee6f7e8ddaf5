"""Time turning a batch of rows into columns: the compiled kernel against ``zip(*rows)``.

``db.transpose``: 20,000 request rows of the import benchmark's kind (a generated log read by the
import's own reader), sorted by visitor and time as a day is tallied (so the rows are read out of
the order they were made in, as the tally reads them), turned into one list per column. Ours is
``src/_native/transpose.pyx`` (each row visited once); the peer is
``[list(column) for column in zip(*rows)]`` (what the writer and the tally ran before, through
``columns.py_transpose``'s last step). Before timing, both results are checked equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic.rows import ROW_COLUMNS
from tests.traffic import accesslog

kernel = load_kernel("transpose")
pytestmark = pytest.mark.skipif(kernel is None, reason="the transpose kernel is not built")

ROWS = 20_000
WIDTH = len(ROW_COLUMNS)


def zipped(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    """The rows in a day's tally order, after checking both give the same columns."""
    made, _keys = accesslog.import_rows(ROWS, tmp_path_factory.mktemp("transpose"))
    made.sort(key=lambda row: (row[ROW_COLUMNS.index("visitor_key")], row[1]))
    assert kernel is not None
    assert kernel.transpose(made, WIDTH) == zipped(made, WIDTH)
    return made


def _run(benchmark: Any, role: str, turn: Callable[..., list[list[Any]]], rows: Any) -> None:
    benchmark.group = "db.transpose"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "[list(column) for column in zip(*rows)]"
    assert len(benchmark(turn, rows, WIDTH)) == WIDTH


def test_transpose_ours(benchmark: Any, rows: list[tuple[Any, ...]]) -> None:
    assert kernel is not None
    _run(benchmark, "ours", kernel.transpose, rows)


def test_transpose_peer(benchmark: Any, rows: list[tuple[Any, ...]]) -> None:
    _run(benchmark, "peer", zipped, rows)
