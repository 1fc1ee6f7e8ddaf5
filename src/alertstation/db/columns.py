"""Turn rows (tuples of values in a fixed column order) into columns (a list per column).

Bulk inserts bind column by column and tallies read a column at a time, while rows arrive as
tuples. ``zip(*rows)`` reads a wide batch once per column; the compiled ``transpose`` kernel
(``src/_native/transpose.pyx``) reads each row once. ``py_transpose`` is its reference twin:
both return the same lists, and both refuse a row of another width with a ValueError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from alertstation.kernel_loader import load_kernel


def py_transpose(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Return ``width`` lists, the i-th holding the i-th value of every row of ``rows``, in
    order; ValueError names the first row of another length."""
    if width < 0:
        raise ValueError(f"a width of {width} columns")
    rows = rows if isinstance(rows, list | tuple) else list(rows)
    for number, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"row {number} has {len(row)} values, not {width}")
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)] if width else []


_kernel = load_kernel("transpose")
transpose: Callable[[Sequence[Sequence[Any]], int], list[list[Any]]] = (
    _kernel.transpose if _kernel is not None else py_transpose
)
