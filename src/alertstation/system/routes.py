"""Routes of the platform itself."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission
from alertstation.system.boundary import (
    BoundaryApi,
    BoundaryPage,
    BoundaryPreview,
    BoundaryRecalculation,
)
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
        *boundary_routes(station),
    ]


def boundary_routes(station: Station) -> list[Route]:
    """Return the station boundary's page and API (all need system.configure)."""
    configure = permission("system.configure")
    api = BoundaryApi(station)
    return [
        Route("GET", "/admin/boundary", BoundaryPage(station), configure, summary="Boundary"),
        Route(
            "GET",
            "/admin/boundary/preview.svg",
            BoundaryPreview(station),
            configure,
            summary="Boundary and active alert areas as SVG",
        ),
        Route("GET", "/api/boundary", api, configure, summary="The boundary and match setting"),
        Route(
            "POST",
            "/api/boundary",
            api,
            configure,
            summary="Upload the boundary (GeoJSON, multipart field 'file')",
            max_body=6 * 1024 * 1024,
        ),
        Route("DELETE", "/api/boundary", api, configure, summary="Clear the boundary"),
        Route("PUT", "/api/boundary", api, configure, summary="Set match_polygons"),
        Route(
            "POST",
            "/api/boundary/recalculate",
            BoundaryRecalculation(station),
            configure,
            summary="Re-evaluate the stored alerts against the boundary",
        ),
    ]
