"""The fields of a combined (or common) access-log line: address, time, request, status, size,
referrer and user agent, as nginx and Apache write them.

``COMBINED`` is the pattern, and ``py_split_combined`` matches it. ``split_combined`` is the
compiled kernel (``src/_native/combinedline.pyx``) when it is built, which reads the line in one
pass instead; ``tests/traffic/test_combined_line.py`` holds the two equal on any text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from alertstation.kernel_loader import load_kernel

# Fields are apart by one space or more, except around the request field's quotes, where GoAccess
# 1.7 takes exactly one (a line it cannot read is unreadable here too). The quoted fields use
# possessive repeats, so a line with an unterminated quote fails at once instead of backtracking.
# The request field is taken whole and split by ``enrich.request_parts``.
COMBINED: Final[re.Pattern[str]] = re.compile(
    r'^(\S+) +\S+ +\S+ +\[([^\]]+)\] "((?:[^"\\]++|\\.)*+)" (\d{3}) +(\d+|-)'
    r'(?: +"((?:[^"\\]++|\\.)*+)" +"((?:[^"\\]++|\\.)*+)")?'
)
Fields = tuple[str | None, ...]


def py_split_combined(line: str) -> Fields | None:
    """Return the seven groups of ``COMBINED`` for ``line`` (referrer and user agent None in
    common format), or None when it does not match (the compiled kernel's reference twin)."""
    match = COMBINED.match(line)
    return None if match is None else match.groups()


_kernel = load_kernel("combinedline")
split_combined: Callable[[str], Fields | None] = (
    _kernel.split_combined if _kernel is not None else py_split_combined
)
