"""The alert poller (filled in by its feature)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alertstation.context import Station


def poll_job(station: Station) -> None:
    """Poll every due source."""
