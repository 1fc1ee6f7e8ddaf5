"""Time a tally's visits: the compiled kernel against its plain-Python twin.

``traffic.visit_counts``: 20,000 request rows of the import benchmark's kind (a generated log
read by the import's own reader), sorted by visitor and time as a day is tallied, split into
visits (a new visitor, a gap over 30 minutes, midnight UTC) with their bounces, seconds, and
entry and exit pages. Ours is ``src/_native/visitruns.pyx``; the peer is
``tally.py_visit_counts`` (one Python loop over the rows: what the tally ran before). Before
timing, both results are checked equal.
"""

from __future__ import annotations

from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import tally
from alertstation.traffic.rows import ROW_COLUMNS
from tests.traffic import accesslog

kernel = load_kernel("visitruns")
pytestmark = pytest.mark.skipif(kernel is None, reason="the visitruns kernel is not built")

ROWS = 20_000
NAMES = ("visitor_key", "ts", "path", "page_view")
LIMITS = (float(tally.VISIT_GAP), float(tally.DAY_SECONDS))


@pytest.fixture(scope="module")
def columns(tmp_path_factory: pytest.TempPathFactory) -> list[list[Any]]:
    """The rows' visitor, time, path and page-view columns, after checking both agree."""
    rows, _keys = accesslog.import_rows(ROWS, tmp_path_factory.mktemp("visits"))
    at = [ROW_COLUMNS.index(name) for name in NAMES]
    rows.sort(key=lambda row: (row[at[0]], row[at[1]]))
    made = [[row[place] for row in rows] for place in at]
    assert kernel is not None
    ours = kernel.visit_counts(*made, *LIMITS)
    assert ours == tally.py_visit_counts(*made, *LIMITS) and ours[0] > 1
    return made


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "traffic.visit_counts"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "tally.py_visit_counts (a Python loop)"


def test_visit_counts_ours(benchmark: Any, columns: list[list[Any]]) -> None:
    _label(benchmark, "ours")
    assert kernel is not None
    assert benchmark(kernel.visit_counts, *columns, *LIMITS)[0] > 1


def test_visit_counts_peer(benchmark: Any, columns: list[list[Any]]) -> None:
    _label(benchmark, "peer")
    assert benchmark(tally.py_visit_counts, *columns, *LIMITS)[0] > 1
