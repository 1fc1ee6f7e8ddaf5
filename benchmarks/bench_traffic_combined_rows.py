"""Time reading combined access-log lines into rows: the compiled reader against the enricher's.

``traffic.combined_rows``: 20,000 combined-format lines of the import benchmark's kind (a
generated log, a fifth of it odd: TLS handshakes, encoded targets, API calls, hosts by name),
each read into its row (or its verdict) by an import's enricher with every line kept, its caches
already filled by a first pass, as they are for most of a large import. Ours is the compiled
reader (``src/_native/combinedrow.pyx``, from ``RowEnricher.combined_rows``); the peer is
``RowEnricher.combined_row``, its Python twin (what the import ran before). Both split the line
with the same compiled kernel and share the same caches. Before timing, every line's row is
checked equal.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import importer
from alertstation.traffic.enrich import RowEnricher
from alertstation.traffic.settings import TrafficSettings
from tests.traffic import accesslog

kernel = load_kernel("combinedrow")
pytestmark = pytest.mark.skipif(kernel is None, reason="the combinedrow kernel is not built")

LINES = 20_000


def read_all(read: Callable[[str], Any], lines: list[str]) -> list[Any]:
    return [read(line) for line in lines]


@pytest.fixture(scope="module")
def readers() -> tuple[list[str], Callable[[str], Any], Callable[[str], Any]]:
    """The lines, the compiled reader and the twin, after checking both read every line alike."""
    lines = accesslog.lines(LINES, datetime.now(UTC), odd=True)
    enricher = RowEnricher(importer.import_settings(TrafficSettings(), True), None)
    ours, twin = enricher.combined_rows(), enricher.combined_row
    assert read_all(ours, lines) == read_all(twin, lines)  # the caches filled, then again
    assert read_all(ours, lines) == read_all(twin, lines)
    return lines, ours, twin


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "traffic.combined_rows"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "RowEnricher.combined_row (the Python twin)"


def test_combined_rows_ours(benchmark: Any, readers: Any) -> None:
    _label(benchmark, "ours")
    lines, ours, _twin = readers
    assert len(benchmark(read_all, ours, lines)) == LINES


def test_combined_rows_peer(benchmark: Any, readers: Any) -> None:
    _label(benchmark, "peer")
    lines, _ours, twin = readers
    assert len(benchmark(read_all, twin, lines)) == LINES
