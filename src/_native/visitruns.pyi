"""The visits of a day's rows.

Call ``alertstation.traffic.tally.visit_counts``, which picks this function when it is built;
``tally.py_visit_counts`` is its pure-Python twin.
"""

from typing import Any

def visit_counts(
    keys: list[Any], times: list[float], paths: list[Any], views: list[Any], gap: float, day: float
) -> tuple[int, int, float, dict[Any, int], dict[Any, int]]:
    """Return ``(visits, bounces, seconds, entries, exits)`` of rows sorted by visitor and
    time."""
