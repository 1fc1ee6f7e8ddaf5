"""CSV cells a spreadsheet cannot run: the one rule every CSV export of the station follows.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or
carriage return) as a formula. Values that come from the outside (user agents, usernames, paths,
referrers) could start so, so such a cell gets a leading apostrophe; the value stays readable.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """Return ``value`` as CSV cell text that no spreadsheet runs as a formula (None is empty)."""
    if value is None:
        return ""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def write_rows(rows: Iterable[Sequence[object]]) -> str:
    """Return ``rows`` as CSV text, every cell made safe with :func:`safe_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([safe_cell(value) for value in row])
    return buffer.getvalue()
