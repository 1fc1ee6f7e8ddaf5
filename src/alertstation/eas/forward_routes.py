"""Routes (filled in by their feature)."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the routes."""
    return []
