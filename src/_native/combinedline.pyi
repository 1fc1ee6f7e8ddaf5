"""The fields of a combined access-log line, compiled (``combined_line.py_split_combined``'s twin).

Product code gets it through ``alertstation.traffic.combined_line.split_combined``.
"""

def split_combined(line: str) -> tuple[str | None, ...] | None:
    """Return the ``COMBINED`` pattern's seven groups for ``line``, or None if it does not match."""
