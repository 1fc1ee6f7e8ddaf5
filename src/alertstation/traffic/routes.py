"""Routes of the traffic package."""

from alertstation.context import Station
from alertstation.http.routing import SIGNED_IN, Route, permission
from alertstation.traffic import resources as r


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    settings = r.TrafficSettingsResource(station)
    return [
        Route(
            "GET",
            "/api/traffic/dashboard",
            r.TrafficDashboard(station),
            SIGNED_IN,
            summary="Traffic dashboard data for a period, with drill-down filters",
        ),
        Route(
            "GET",
            "/api/traffic/settings",
            settings,
            permission("system.view_config"),
            summary="Traffic analytics settings",
        ),
        Route(
            "PUT",
            "/api/traffic/settings",
            settings,
            permission("system.configure"),
            summary="Change the traffic analytics settings",
            max_body=16_384,
        ),
    ]
