"""Routes of the alert views and alert administration (the poller's are in ``poll.routes``)."""

from alertstation.alerts import resources as r
from alertstation.alerts import views as v
from alertstation.alerts.broadcast import BroadcastStateApi
from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission

CONFIGURE = permission("system.configure")
ALERT = "/admin/alerts/{alert_id:int}"


def routes(station: Station) -> list[Route]:
    """Return the alert routes."""
    # One snapshot per process, shared by every resource that reads or changes the active alerts.
    broadcast = station.broadcast
    admin = r.AlertAdmin(station, broadcast)
    return [
        Route("GET", "/api/alerts", r.AlertsApi(station), PUBLIC, summary="Stored alerts"),
        Route(
            "GET",
            "/api/alerts/{alert_id:int}",
            r.AlertApi(station),
            PUBLIC,
            summary="One stored alert with why it is in the broadcast area",
        ),
        Route(
            "GET",
            "/api/broadcast/state",
            BroadcastStateApi(broadcast),
            PUBLIC,
            summary="Whether the station is broadcasting",
        ),
        Route(
            "POST",
            "/admin/mark_expired",
            r.MarkExpired(station, broadcast),
            CONFIGURE,
            summary="Run the alert expiry sweep now",
        ),
        Route(
            "POST",
            "/admin/clear_expired",
            r.ClearExpired(station, broadcast),
            CONFIGURE,
            summary="Delete ended alerts older than N days",
        ),
        Route("PATCH", ALERT, admin, CONFIGURE, summary="Change an alert's expiry or state"),
        Route("DELETE", ALERT, admin, CONFIGURE, summary="Delete an alert"),
        Route("GET", "/alerts", v.ActiveAlertsPage(station), SIGNED_IN, summary="Active alerts"),
        Route("GET", "/alerts/history", v.AlertHistoryPage(station), SIGNED_IN, summary="History"),
        Route(
            "GET", "/alerts/{alert_id:int}", v.AlertDetailPage(station), SIGNED_IN, summary="Alert"
        ),
    ]
