"""Auto-forward of CAP alerts to air (filled in by its feature)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alertstation.context import Station


def forward_job(station: Station) -> None:
    """Air what waits in the forward queue."""


def rwt_job(station: Station) -> None:
    """Air the weekly test when it falls due."""
