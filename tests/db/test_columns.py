"""Rows into columns: the compiled transpose gives what its plain-Python twin gives."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.db import columns
from alertstation.kernel_loader import load_kernel
from tests.fuzz.fuzzing import fuzz

kernel = load_kernel("transpose")
pytestmark = pytest.mark.skipif(kernel is None, reason="the transpose kernel is not built")

VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())


def both(rows: Any, width: int) -> list[list[Any]]:
    assert kernel is not None
    ours = kernel.transpose(rows, width)
    assert ours == columns.py_transpose(rows, width)
    return ours


def test_each_column_holds_its_values_in_row_order() -> None:
    rows = [(1, "a", None), (2, "b", 3.5), (3, "c", True)]
    assert both(rows, 3) == [[1, 2, 3], ["a", "b", "c"], [None, 3.5, True]]
    assert both([[1, 2], (3, 4)], 2) == [[1, 3], [2, 4]]  # lists and tuples alike
    assert both(((1,),), 1) == [[1]]
    assert both([], 3) == [[], [], []]  # no rows: each column empty, not none at all
    assert both([(), ()], 0) == []


def test_columns_are_new_lists_holding_the_rows_own_values() -> None:
    assert kernel is not None
    value = object()
    held = sys.getrefcount(value)
    made = kernel.transpose([(value, 1), (value, 2)], 2)
    assert made[0][0] is value and made[0][1] is value
    assert sys.getrefcount(value) == held + 2
    del made
    assert sys.getrefcount(value) == held  # freed with the columns


def test_rows_from_an_iterator_are_read_once() -> None:
    assert kernel is not None
    for twin in (kernel.transpose, columns.py_transpose):
        assert twin(iter([(1, 2), (3, 4)]), 2) == [[1, 3], [2, 4]]


@pytest.mark.parametrize(
    ("rows", "width", "message"),
    [
        ([(1, 2), (1,)], 2, "row 1 has 1 values, not 2"),
        ([(1, 2), (1, 2, 3)], 2, "row 1 has 3 values, not 2"),
        ([(1,)], 2, "row 0 has 1 values, not 2"),
        ([(1,)], -1, "a width of -1 columns"),
    ],
)
def test_a_row_of_another_width_is_named(rows: Any, width: int, message: str) -> None:
    assert kernel is not None
    for twin in (kernel.transpose, columns.py_transpose):
        with pytest.raises(ValueError, match=message):
            twin(rows, width)


def test_a_value_held_when_a_later_row_is_refused_is_released() -> None:
    assert kernel is not None
    value = object()
    held = sys.getrefcount(value)
    with pytest.raises(ValueError):
        kernel.transpose([(value, value), (value,)], 2)
    assert sys.getrefcount(value) == held


def test_rows_that_are_not_sequences_are_refused() -> None:
    assert kernel is not None
    with pytest.raises(TypeError):
        kernel.transpose([(1,), 5], 1)
    with pytest.raises(TypeError):
        kernel.transpose(5, 1)


def test_rows_changed_by_reading_a_row_are_refused() -> None:
    assert kernel is not None
    rows: list[Any] = []

    class Shrinking:
        def __iter__(self) -> Any:
            rows.clear()  # a row whose reading empties the batch it is in
            return iter((1, 2))

    rows.extend([Shrinking(), (3, 4), (5, 6)])
    with pytest.raises(RuntimeError, match="changed while they were read"):
        kernel.transpose(rows, 2)
    # In another batch, the same row changes nothing that is being read.
    assert kernel.transpose([(1, 2), Shrinking()], 2) == [[1, 1], [2, 2]]


@fuzz(300)
@given(
    width=st.integers(0, 6),
    drawn=st.lists(st.lists(VALUES, min_size=0, max_size=7), max_size=30),
)
def test_any_rows_give_the_twins_columns_or_its_error(width: int, drawn: list[list[Any]]) -> None:
    assert kernel is not None
    rows = [tuple(row) for row in drawn]
    try:
        expected: Any = columns.py_transpose(rows, width)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)):
            kernel.transpose(rows, width)
        return
    assert kernel.transpose(rows, width) == expected
