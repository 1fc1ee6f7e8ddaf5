"""Routes of the alert poller: poll now, import one alert file, manage poll sources, the page."""

from alertstation.alerts.poll import resources as p
from alertstation.context import Station
from alertstation.http.routing import Route, permission

CONFIGURE = permission("system.configure")
VIEW_CONFIG = permission("system.view_config")
SOURCES = "/admin/poller/sources"


def routes(station: Station) -> list[Route]:
    """Return the poller's routes."""
    broadcast = station.broadcast  # an import or a poll can change the active alerts
    sources = p.PollSourceCollection(station)
    source = p.PollSourceItem(station)
    return [
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
        Route(
            "GET",
            "/admin/poller",
            p.AlertFeedsPage(station),
            VIEW_CONFIG,
            summary="Alert feeds page: feeds, their health, the feed form and CAP import",
        ),
        Route("GET", SOURCES, sources, VIEW_CONFIG, summary="Poll sources and their health"),
        Route("POST", SOURCES, sources, CONFIGURE, summary="Add a poll source"),
        Route("PUT", SOURCES + "/{source_id:int}", source, CONFIGURE, summary="Change a source"),
        Route(
            "POST",
            SOURCES + "/{source_id:int}",
            source,
            CONFIGURE,
            summary="Change a source from the feed form sent without script (303 to the page)",
        ),
        Route("DELETE", SOURCES + "/{source_id:int}", source, CONFIGURE, summary="Remove a source"),
    ]
