"""Hits, bytes and distinct visitors per distinct key of many rows (a tally's profiles).

Call ``alertstation.traffic.tally.profile_tallies``, which picks this function when it is built;
``tally.py_profile_tallies`` is its pure-Python twin.
"""

from collections.abc import Sequence
from typing import Any

def profile_tallies(
    columns: Sequence[Sequence[Any]], visitors: list[int], sizes: list[int]
) -> list[tuple[tuple[Any, ...], int, int, list[int]]]:
    """Return ``(key, hits, bytes, visitors)`` for each distinct key, in order of first
    appearance."""
