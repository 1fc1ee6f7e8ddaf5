"""Routes of manual EAS and the message archive."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the EAS routes."""
    return []
