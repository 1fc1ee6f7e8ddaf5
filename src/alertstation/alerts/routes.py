"""Routes of the alert views and alert administration."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the alert routes."""
    return []
