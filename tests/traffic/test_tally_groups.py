"""The compiled profile tally gives what its plain-Python twin gives, on any rows."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap

from alertstation.kernel_loader import load_kernel
from alertstation.traffic import tally
from tests.fuzz.fuzzing import fuzz

kernel = load_kernel("tallygroups")
pytestmark = pytest.mark.skipif(kernel is None, reason="the tallygroups kernel is not built")

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["/", "/a", "é"]))


def both(columns: list[Any], visitors: list[int], sizes: list[int]) -> list[Any]:
    assert kernel is not None
    ours = kernel.profile_tallies(columns, visitors, sizes)
    assert ours == tally.py_profile_tallies(columns, visitors, sizes)
    return ours


def test_keys_come_in_order_of_first_appearance_with_hits_bytes_and_distinct_visitors() -> None:
    assert kernel is not None
    paths = ["/b", "/a", "/b", "/c", "/a", "/b"]
    codes = (200, 404, 200, 200, 404, 304)
    found = both([paths, codes], [7, 3, 7, 2**32 - 1, 1, 0], [10, 0, 5, 1, 2, 0])
    assert found == [
        (("/b", 200), 2, 15, [7]),
        (("/a", 404), 2, 2, [1, 3]),
        (("/c", 200), 1, 1, [2**32 - 1]),
        (("/b", 304), 1, 0, [0]),
    ]
    assert both([[], []], [], []) == []
    for twin in (kernel.profile_tallies, tally.py_profile_tallies):
        with pytest.raises(ValueError, match="no columns"):
            twin([], [1], [0])


@fuzz(300)
@given(
    drawn=st.lists(
        st.tuples(VALUES, VALUES, st.integers(0, 40), st.integers(0, 2**40)), max_size=60
    )
)
def test_any_rows_give_the_twins_tally(drawn: list[tuple[Any, Any, int, int]]) -> None:
    for rows in (drawn, sorted(drawn, key=lambda row: row[2])):  # also in runs of a visitor
        first, second = [row[0] for row in rows], tuple(row[1] for row in rows)
        both([first, second], [row[2] for row in rows], [row[3] for row in rows])


def test_a_row_of_equal_values_that_are_other_objects_has_the_key_of_the_row_before() -> None:
    """A row holding the very objects of the row before takes its key without a lookup; equal
    values that are other objects, and a visitor coming back to a key, count the same."""
    path, same_path = "/a", "".join(["/", "a"])
    assert path == same_path and path is not same_path
    found = both(
        [[path, path, same_path, "/b", path], [200, 200, 200, 200, 200]],
        [4, 4, 4, 5, 4],
        [1, 2, 3, 4, 5],
    )
    assert found == [(("/a", 200), 4, 11, [4]), (("/b", 200), 1, 4, [5])]


@pytest.mark.parametrize(
    ("columns", "visitors", "sizes", "error"),
    [
        ([[1, 2]], [1], [0], ValueError),
        ([[1]], [1], [0, 0], ValueError),
        ([[1]], [-1], [0], OverflowError),
        ([[1]], [2**32], [0], OverflowError),
        ([[1]], [1], [None], TypeError),
    ],
)
def test_rows_it_cannot_tally_are_refused(
    columns: list[Any], visitors: list[int], sizes: list[Any], error: type[Exception]
) -> None:
    assert kernel is not None
    with pytest.raises(error):
        kernel.profile_tallies(columns, visitors, sizes)


@pytest.mark.parametrize(
    "made",
    [
        tally.Tally(),
        tally.Tally(3, 1_500, 12.5, 9.0, BitMap([1, 7, 2**32 - 1])),
        tally.Tally(hits=2, max_ms=None),
    ],
)
def test_a_tally_comes_back_from_a_pickle_as_it_went(made: tally.Tally) -> None:
    # An import's tally crosses from the child process pickled (``Tally.__reduce__``).
    back = pickle.loads(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == made and type(back.visitors) is BitMap
    back.visitors.add(5)  # its own bitmap, not one shared with another tally
    assert 5 not in tally.Tally().visitors and 5 not in made.visitors


def test_the_first_values_of_a_long_list_are_the_first_of_it_all_sorted() -> None:
    # ``ordered`` with a limit sorts only the values with at least the limit-th most hits.
    rng = random.Random(3)
    Tally, ordered = tally.Tally, tally.ordered
    for size in (0, 5, 10, 11, 400):
        tallies = {
            (rng.choice(["a", "b", None]), rng.randrange(50) if rng.random() < 0.9 else None): (
                Tally(hits=rng.randrange(1, 6))
            )
            for _ in range(size)
        }
        everything = ordered(tallies, None)
        assert [key for key, _ in everything] == [
            key
            for key, _ in sorted(
                tallies.items(),
                key=lambda item: (-item[1].hits, [(v is not None, v) for v in item[0]]),
            )
        ]
        for limit in (1, 3, 10):
            assert ordered(tallies, limit) == everything[:limit]
