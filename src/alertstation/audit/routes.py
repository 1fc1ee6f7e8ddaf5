"""Routes of the audit log views."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the audit log routes."""
    return []
