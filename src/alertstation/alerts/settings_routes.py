"""Routes of the alert location and filtering settings."""

from alertstation.context import Station
from alertstation.http.routing import Route


def routes(station: Station) -> list[Route]:
    """Return the routes of the alert location and filtering settings."""
    return []
