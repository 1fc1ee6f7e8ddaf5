"""Time a tally's profiles: the compiled kernel against its plain-Python twin.

``traffic.profile_tallies``: 20,000 request rows of the import benchmark's kind (a generated log
read by the import's own reader), sorted by visitor and time as a day is tallied, then grouped
by each of ``tally.PROFILES`` (the request, the address, the agent, the referrer, the session):
hits, bytes and distinct visitor ids per distinct key. Ours is ``src/_native/tallygroups.pyx``;
the peer is ``tally.py_profile_tallies`` (Counter, a loop for the bytes and a set of pairs for the
visitors: what the tally ran before). Before timing, every profile's result is checked equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import tally
from alertstation.traffic.rows import ROW_COLUMNS
from tests.traffic import accesslog

kernel = load_kernel("tallygroups")
pytestmark = pytest.mark.skipif(kernel is None, reason="the tallygroups kernel is not built")

ROWS = 20_000
Profiles = list[tuple[list[Any], list[int], list[int]]]


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> Profiles:
    """Each profile's columns, with the visitor ids and sizes, after checking both agree."""
    rows, _keys = accesslog.import_rows(ROWS, tmp_path_factory.mktemp("tally"))
    rows.sort(key=lambda row: (row[ROW_COLUMNS.index("visitor_key")], row[1]))
    columns = dict(zip(ROW_COLUMNS, zip(*rows, strict=True), strict=True))
    ids: dict[str, int] = {}
    visitors = [ids.setdefault(key, len(ids)) for key in columns["visitor_key"]]
    sizes = [size or 0 for size in columns["content_length"]]
    made = [([columns[name] for name in profile], visitors, sizes) for profile in tally.PROFILES]
    assert kernel is not None
    assert tally_all(kernel.profile_tallies, made) == tally_all(tally.py_profile_tallies, made)
    return made


def tally_all(group: Callable[..., Any], profiles: Profiles) -> list[Any]:
    return [group(columns, visitors, sizes) for columns, visitors, sizes in profiles]


def _label(benchmark: Any, role: str) -> None:
    benchmark.group = "traffic.profile_tallies"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = "tally.py_profile_tallies (Counter and sets)"


def test_profile_tallies_ours(benchmark: Any, profiles: Profiles) -> None:
    _label(benchmark, "ours")
    assert kernel is not None
    assert len(benchmark(tally_all, kernel.profile_tallies, profiles)) == len(tally.PROFILES)


def test_profile_tallies_peer(benchmark: Any, profiles: Profiles) -> None:
    _label(benchmark, "peer")
    assert len(benchmark(tally_all, tally.py_profile_tallies, profiles)) == len(tally.PROFILES)
