"""Routes of the ban list and the Security Center."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the security routes."""
    return []
