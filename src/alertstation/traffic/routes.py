"""Routes of the traffic package."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission
from alertstation.traffic import resources as r


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    settings = r.TrafficSettingsResource(station)
    private = r.TrafficPrivacy(station)
    configure = permission("system.configure")
    dashboard = r.TrafficDashboard(station)
    return [
        Route(
            "GET",
            "/traffic/dashboard",
            r.TrafficDashboardPage(station),
            SIGNED_IN,
            summary="Web traffic dashboard page",
        ),
        Route(
            "GET",
            "/api/traffic/client",
            r.TrafficClientBeacon(station),
            PUBLIC,
            summary="Client beacon: the screen resolution, once per session",
        ),
        Route(
            "GET",
            "/api/traffic/anomalies",
            r.TrafficAnomalies(station),
            SIGNED_IN,
            summary="Traffic anomalies of the last hour",
        ),
        Route(
            "POST",
            "/api/traffic/privacy/purge",
            private,
            configure,
            suffix="purge",
            summary="Delete one address's request rows",
            max_body=4096,
        ),
        Route(
            "POST",
            "/api/traffic/privacy/anonymize",
            private,
            configure,
            suffix="anonymize",
            summary="Mask one address in its request rows",
            max_body=4096,
        ),
        Route(
            "POST",
            "/api/traffic/purge-all",
            private,
            configure,
            suffix="all",
            summary="Empty the request log (settings and GeoIP databases kept)",
            max_body=4096,
        ),
        Route(
            "GET",
            "/api/traffic/dashboard",
            dashboard,
            SIGNED_IN,
            summary="Traffic dashboard data for a period, with drill-down filters",
        ),
        Route(
            "GET",
            "/api/traffic/dashboard.csv",
            r.TrafficDashboardCsv(dashboard),
            SIGNED_IN,
            summary="The traffic dashboard as CSV (formula cells neutralised)",
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
