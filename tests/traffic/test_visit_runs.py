"""The compiled visit counter gives what its plain-Python twin gives, on any rows."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import tally
from tests.fuzz.fuzzing import fuzz

kernel = load_kernel("visitruns")
pytestmark = pytest.mark.skipif(kernel is None, reason="the visitruns kernel is not built")
GAP, DAY = float(tally.VISIT_GAP), float(tally.DAY_SECONDS)


def both(rows: list[tuple[Any, float, Any, Any]]) -> tuple[Any, ...]:
    """Each counter's result for the rows (visitor, time, path, page view) as given."""
    assert kernel is not None
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[], [], [], []]
    ours = kernel.visit_counts(*columns, GAP, DAY)
    twin = tally.py_visit_counts(*columns, GAP, DAY)
    assert repr(ours) == repr(twin)  # NaN seconds alike, and the paths in the same order
    assert [type(value) for value in ours] == [type(value) for value in twin]
    return ours


def test_visits_end_at_a_new_visitor_a_long_gap_and_midnight() -> None:
    midnight = 20_000 * DAY
    rows = [
        ("a", midnight - 600.0, "/", True),  # a: one visit across midnight is two
        ("a", midnight - 60.0, "/alerts", True),
        ("a", midnight + 30.0, "/zones", True),
        ("b", midnight + 100.0, "/static/app.css", False),  # b: no page view, a bounce
        ("c", midnight + 200.0, "/", True),  # c: a gap of exactly 30 minutes stays one visit
        ("c", midnight + 200.0 + GAP, "/alerts", True),
        ("c", midnight + 201.0 + 2 * GAP, "/zones", True),  # and over it starts another
    ]
    visits, bounces, seconds, entries, exits = both(rows)
    assert visits == 5 and bounces == 3
    assert seconds == 540.0 + GAP
    assert entries == {"/": 2, "/zones": 2} and exits == {"/alerts": 2, "/zones": 2}
    assert both([]) == (0, 0, 0.0, {}, {})


def test_a_visitor_is_told_by_equality_not_by_which_object_holds_it() -> None:
    key, same = "192.0.2.1", "".join(["192.0.2.", "1"])
    assert key == same and key is not same
    assert both([(key, 10.0, "/", True), (same, 20.0, "/a", True)])[0] == 1


def test_rows_of_other_lengths_are_refused_alike() -> None:
    assert kernel is not None
    for counter in (kernel.visit_counts, tally.py_visit_counts):
        with pytest.raises(ValueError, match="2 visitors, 1 times"):
            counter(["a", "b"], [1.0], ["/"], [True], GAP, DAY)


KEYS = st.sampled_from(["a", "b", "c", "2001:db8::/64"])
TIMES = st.one_of(
    st.integers(0, 4 * 86_400).map(float),
    st.floats(0, 4 * 86_400, allow_nan=False),
    st.sampled_from([86_400.0 - 1e-9, 86_400.0, 1800.0, math.nan, math.inf]),
)
ROWS = st.lists(st.tuples(KEYS, TIMES, st.sampled_from(["/", "/a", None]), st.booleans()))


@fuzz(300)
@given(rows=ROWS)
def test_any_rows_give_the_twins_visits(rows: list[tuple[Any, float, Any, Any]]) -> None:
    both(rows)  # in any order
    both(sorted(rows, key=lambda row: (row[0], row[1])))  # as a day's tally sorts them
