"""Time splitting access-log lines into their fields: the compiled kernel against ``re``.

``traffic.combined_line``: 20,000 combined-format lines of the import benchmark's kind (a
generated log, a fifth of it odd: TLS handshakes, encoded targets, API calls, hosts by name),
each split into address, time, request, status, size, referrer and agent by the compiled kernel
(``src/_native/combinedline.pyx``) against its twin, which matches the ``COMBINED`` pattern with
``re`` (what the import ran before). Before timing, every line's fields are checked equal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic.combined_line import py_split_combined
from tests.traffic import accesslog

kernel = load_kernel("combinedline")
pytestmark = pytest.mark.skipif(kernel is None, reason="the combinedline kernel is not built")

LINES = 20_000


def split_all(split: Any, lines: list[str]) -> list[Any]:
    return [split(line) for line in lines]


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """Return the lines, after checking the kernel splits each as the pattern does."""
    found = accesslog.lines(LINES, datetime.now(UTC), odd=True)
    assert kernel is not None
    assert split_all(kernel.split_combined, found) == split_all(py_split_combined, found)
    return found


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "traffic.combined_line"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "re (the COMBINED pattern)"


def test_combined_line_ours(benchmark: Any, lines: list[str]) -> None:
    _label(benchmark, "ours")
    assert kernel is not None
    assert len(benchmark(split_all, kernel.split_combined, lines)) == LINES


def test_combined_line_peer(benchmark: Any, lines: list[str]) -> None:
    _label(benchmark, "peer")
    assert len(benchmark(split_all, py_split_combined, lines)) == LINES
