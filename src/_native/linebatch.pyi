"""Access-log lines into rows and import keys, compiled (``PyLineBatch``'s twin).

Product code gets a reader from ``alertstation.traffic.line_batch.LineBatch``.
"""

from collections.abc import Callable, Iterator
from typing import Any

class LineBatch:
    """Read lines into rows and import keys, a batch at a time."""

    number: int

    def __init__(
        self,
        row: Callable[[str], Any],
        filtered: object,
        ts_index: int,
        oldest: float,
        live_from: float,
        live_until: float,
        progress: Callable[[], None] | None,
        generation: int = 200_000,
    ) -> None: ...
    def read(
        self, lines: Iterator[bytes], batch: int
    ) -> tuple[list[tuple[Any, ...]], list[str], bool]: ...
    def take_counts(self) -> tuple[int, int, int, int, int, int | None]: ...
