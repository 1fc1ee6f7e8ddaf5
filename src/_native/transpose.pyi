"""Rows into columns (``zip(*rows)``, visiting each row once).

Call ``alertstation.db.columns.transpose``, which picks this function when it is built;
``columns.py_transpose`` is its pure-Python twin.
"""

from collections.abc import Sequence
from typing import Any

def transpose(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Return ``width`` lists, the i-th holding the i-th value of every row, in order."""
