"""Routes of the GeoIP database uploads."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the routes of the GeoIP database uploads."""
    return []
