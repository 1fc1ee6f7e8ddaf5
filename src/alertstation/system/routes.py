"""Routes of the platform itself."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission
from alertstation.system.fips import CountyTableApi
from alertstation.system.resources import HealthResource, HomePage
from alertstation.system.status import StatusPage, SystemStatusApi


def routes(station: Station) -> list[Route]:
    """Return the platform's routes."""
    system = SystemStatusApi(station)
    return [
        Route("GET", "/healthz", HealthResource(station), PUBLIC, summary="Health check"),
        Route("GET", "/", HomePage(station), SIGNED_IN, summary="Station overview"),
        Route(
            "GET",
            "/api/system_status",
            system,
            PUBLIC,
            summary="Version, database, catalog, alert counts and poll source health",
        ),
        Route("GET", "/status", StatusPage(station, system), SIGNED_IN, summary="Status page"),
        Route(
            "GET",
            "/api/fips/counties",
            CountyTableApi(station),
            permission("eas.broadcast"),
            summary="States, and a state's counties by name, for the Manual EAS county picker",
        ),
    ]
