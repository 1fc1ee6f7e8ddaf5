"""Automatic bans (filled in by its feature)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alertstation.context import Station


def autoban_job(station: Station) -> None:
    """Prune old security events and counters."""
