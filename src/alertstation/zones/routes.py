"""Routes of the zone catalog administration."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the zone catalog routes."""
    return []
