"""Routes of the alert views and alert administration."""

from alertstation.alerts import resources as r
from alertstation.alerts import views as v
from alertstation.alerts.broadcast import BroadcastStateApi
from alertstation.alerts.poll import resources as p
from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission

CONFIGURE = permission("system.configure")
VIEW_CONFIG = permission("system.view_config")
ALERT = "/admin/alerts/{alert_id:int}"
SOURCES = "/admin/poller/sources"


def routes(station: Station) -> list[Route]:
    """Return the alert routes."""
    # One snapshot per process, shared by every resource that reads or changes the active alerts.
    broadcast = station.broadcast
    admin = r.AlertAdmin(station, broadcast)
    sources = p.PollSourceCollection(station)
    source = p.PollSourceItem(station)
    return [
        Route("GET", "/api/alerts", r.AlertsApi(station), PUBLIC, summary="Stored alerts"),
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
        Route(
            "POST",
            "/admin/trigger_poll",
            p.TriggerPoll(station, broadcast),
            CONFIGURE,
            summary="Poll every enabled alert source now",
        ),
        Route(
            "POST",
            "/admin/import_alert",
            p.ImportAlert(station, broadcast),
            CONFIGURE,
            summary="Import one CAP XML or JSON alert file (multipart or raw body)",
            max_body=p.IMPORT_MAX_BODY,
        ),
        Route("GET", SOURCES, sources, VIEW_CONFIG, summary="Poll sources and their health"),
        Route("POST", SOURCES, sources, CONFIGURE, summary="Add a poll source"),
        Route("PUT", SOURCES + "/{source_id:int}", source, CONFIGURE, summary="Change a source"),
        Route("DELETE", SOURCES + "/{source_id:int}", source, CONFIGURE, summary="Remove a source"),
        Route("GET", "/alerts", v.ActiveAlertsPage(station), SIGNED_IN, summary="Active alerts"),
        Route("GET", "/alerts/history", v.AlertHistoryPage(station), SIGNED_IN, summary="History"),
        Route(
            "GET", "/alerts/{alert_id:int}", v.AlertDetailPage(station), SIGNED_IN, summary="Alert"
        ),
    ]
