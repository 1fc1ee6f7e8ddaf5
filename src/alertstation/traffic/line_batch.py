"""Read access-log lines, a batch at a time, into rows and their import keys.

``LineBatch`` is the compiled reader (``src/_native/linebatch.pyx``) when it is built, else
``PyLineBatch``, its reference twin: both take the same lines to the same rows, keys and counts.
Each line is stripped of its line ending, skipped when blank, decoded as UTF-8 (bad bytes
replaced) and read into a row by the given ``row`` function. A row is kept unless it is older
than ``oldest`` or falls in the span the station recorded itself (``live_from`` to
``live_until``); a kept row's import key is its second, the line's SHA-256 and the line's copy
number within the file (identical lines are numbered: the second copy is a second request).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from alertstation.kernel_loader import load_kernel

#: Copies of a line are counted in two generations of this many distinct lines each, so memory
#: stays bounded on a file of any length; copies fewer than this many lines apart (identical
#: lines share their second, so they sit close) are numbered right.
GENERATION = 200_000

Row = tuple[Any, ...]
RowOf = Callable[[str], Any]


def import_key(second: int, digest: bytes, copy: int) -> str:
    """Return the import key of a line: its request's second in hex (so keys arrive in the
    unique index's order), the first 24 bytes of its SHA-256 ``digest``, and its ``copy``."""
    return f"{second:010x}-{digest[:24].hex()}:{copy}"


class BatchReader(Protocol):
    """The interface of ``PyLineBatch`` and the compiled ``LineBatch``."""

    number: int

    def read(self, lines: Iterator[bytes], batch: int) -> tuple[list[Row], list[str], bool]: ...

    def take_counts(self) -> tuple[int, int, int, int, int, int | None]: ...


class PyLineBatch:
    """Read lines into rows and import keys, a batch at a time (the twin of the compiled
    ``LineBatch``).

    ``row`` reads a decoded line into its row (None: not a log line; ``filtered``: left out by
    the settings); ``ts_index`` is where a row holds its time in seconds; ``progress`` (when not
    None) is called for each line.
    """

    def __init__(
        self,
        row: RowOf,
        filtered: object,
        ts_index: int,
        oldest: float,
        live_from: float,
        live_until: float,
        progress: Callable[[], None] | None,
        generation: int = GENERATION,
    ) -> None:
        if generation < 1:
            raise ValueError(f"a generation of {generation} lines")
        self._row, self._filtered, self._ts = row, filtered, ts_index
        self._oldest, self._live_from, self._live_until = oldest, live_from, live_until
        self._progress, self._generation = progress, generation
        self._new: dict[bytes, int] = {}
        self._old: dict[bytes, int] = {}
        #: The number of the last line read (from 1, blank lines included).
        self.number = 0
        self._first_bad: int | None = None
        self._counts = [0, 0, 0, 0, 0]  # lines, unparsable, filtered, too old, recorded live

    def read(self, lines: Iterator[bytes], batch: int) -> tuple[list[Row], list[str], bool]:
        """Read ``lines`` until the one before a line whose number is a multiple of ``batch``,
        or their end; return the rows kept, their keys, and whether the lines may go on."""
        if batch < 1:
            raise ValueError(f"a batch of {batch} lines")
        rows: list[Row] = []
        keys: list[str] = []
        counts = self._counts
        for raw in lines:
            self.number += 1
            if self._progress is not None:
                self._progress()
            line = raw.rstrip(b"\r\n")
            if line.strip():
                counts[0] += 1
                self._take(line, rows, keys)
            if (self.number + 1) % batch == 0:
                return rows, keys, True
        return rows, keys, False

    def _take(self, line: bytes, rows: list[Row], keys: list[str]) -> None:
        counts = self._counts
        row = self._row(line.decode("utf-8", "replace"))
        if row is None:
            counts[1] += 1
            if self._first_bad is None:
                self._first_bad = self.number
            return
        if row is self._filtered:
            counts[2] += 1
            return
        ts = row[self._ts]
        if ts < self._oldest:
            counts[3] += 1
            return
        if self._live_from <= ts <= self._live_until:
            counts[4] += 1
            return
        digest = hashlib.sha256(line).digest()
        copy = (self._new.get(digest) or self._old.get(digest, 0)) + 1
        if len(self._new) >= self._generation:
            self._old, self._new = self._new, {}
        self._new[digest] = copy
        rows.append(row)
        keys.append(import_key(int(ts), digest, copy))

    def take_counts(self) -> tuple[int, int, int, int, int, int | None]:
        """Return the lines read that were not blank, unparsable, filtered out, too old and
        recorded live since the last call, and the number of the first unparsable line."""
        taken = self._counts
        self._counts = [0, 0, 0, 0, 0]
        return taken[0], taken[1], taken[2], taken[3], taken[4], self._first_bad


_kernel = load_kernel("linebatch")


#: The compiled reader when it is built, else ``PyLineBatch`` (the same arguments).
LineBatch: Callable[..., BatchReader] = _kernel.LineBatch if _kernel is not None else PyLineBatch
