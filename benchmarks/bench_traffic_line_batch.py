"""Time reading access-log lines into a batch of rows and import keys: compiled against twin.

``traffic.line_batch``: 20,000 combined-format lines of the import benchmark's kind (a generated
log, a fifth of it odd), as bytes with their line endings, read in one batch as the import reads
them: each line stripped, decoded, read into its row by an import's enricher (its caches filled
by a first pass, as they are for most of a large import), checked against the retention and the
live span, hashed, numbered among its copies and keyed. Ours is the compiled reader
(``src/_native/linebatch.pyx``); the peer is ``line_batch.PyLineBatch``, its Python twin (what
the import ran before). Both call the same row reader. Before timing, both readers' rows, keys
and counts are checked equal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import importer
from alertstation.traffic.enrich import FILTERED, RowEnricher
from alertstation.traffic.line_batch import PyLineBatch
from alertstation.traffic.settings import TrafficSettings
from tests.traffic import accesslog

kernel = load_kernel("linebatch")
pytestmark = pytest.mark.skipif(kernel is None, reason="the linebatch kernel is not built")

LINES = 20_000


def read_batch(make: Any, row: Any, lines: list[bytes]) -> tuple[Any, ...]:
    """Read ``lines`` in one batch with a new reader made by ``make``."""
    reading = make(row, FILTERED, 1, 0.0, 1.0, 0.0, None)
    rows, keys, _more = reading.read(iter(lines), len(lines) + 2)
    return rows, keys, reading.take_counts()


@pytest.fixture(scope="module")
def batch() -> tuple[list[bytes], Any]:
    """The lines and the row reader, after checking both readers read them alike."""
    text = accesslog.lines(LINES, datetime.now(UTC), odd=True)
    lines = [f"{line}\n".encode() for line in text]
    enricher = RowEnricher(importer.import_settings(TrafficSettings(), True), None)
    row = enricher.combined_rows()
    ours = read_batch(kernel.LineBatch, row, lines)
    assert ours == read_batch(PyLineBatch, row, lines)
    assert len(ours[0]) > LINES // 2
    return lines, row


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "traffic.line_batch"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "line_batch.PyLineBatch (the Python twin)"


def test_line_batch_ours(benchmark: Any, batch: Any) -> None:
    _label(benchmark, "ours")
    lines, row = batch
    assert len(benchmark(read_batch, kernel.LineBatch, row, lines)[1]) > LINES // 2


def test_line_batch_peer(benchmark: Any, batch: Any) -> None:
    _label(benchmark, "peer")
    lines, row = batch
    assert len(benchmark(read_batch, PyLineBatch, row, lines)[1]) > LINES // 2
