"""Routes of the platform itself."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route
from alertstation.system.resources import DocsPage, HealthResource, HomePage


def routes(station: Station) -> list[Route]:
    """Return the platform's routes."""
    return [
        Route("GET", "/healthz", HealthResource(station), PUBLIC, summary="Health check"),
        Route("GET", "/", HomePage(station), SIGNED_IN, summary="Station overview"),
        Route("GET", "/docs", DocsPage(station), PUBLIC, summary="Documentation"),
    ]
