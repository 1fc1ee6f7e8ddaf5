"""Routes of the host firewall bridge."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the host firewall bridge routes."""
    return []
