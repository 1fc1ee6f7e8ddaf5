"""Routes of the traffic package."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    return []
