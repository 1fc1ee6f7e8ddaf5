"""The row of one combined access-log line, compiled (``RowEnricher.combined_row``'s twin).

Product code gets a reader from ``alertstation.traffic.enrich.RowEnricher.combined_rows``.
"""

from collections.abc import Callable
from typing import Any

class CombinedRows:
    """Read combined lines into rows for one ``RowEnricher``, from its own caches."""

    def __init__(
        self,
        enricher: Any,
        split: Callable[[str], tuple[str | None, ...] | None],
        parse_time: Callable[[str], float],
        unescape: Callable[[str | None], str | None],
        remember: Callable[[dict[Any, Any], Any, Any], Any],
        most_bytes: int,
        filtered: tuple[Any, ...],
        source: str,
    ) -> None: ...
    def __call__(self, line: str) -> tuple[Any, ...] | None:
        """Return the row of ``line``: None when it is not a combined line, ``filtered`` when
        the settings leave it out."""
