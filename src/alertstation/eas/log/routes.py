"""Routes of the station log: reading needs ``system.view_config``; notes, corrections and
reviews need ``eas.broadcast`` (and the CSRF token, as every state-changing route)."""

from alertstation.context import Station
from alertstation.eas.log.resources import (
    API_PATH,
    CORRECTIONS_PATH,
    NOTES_PATH,
    PAGE_PATH,
    REVIEWS_PATH,
    LogApi,
    LogCorrections,
    LogExport,
    LogNotes,
    LogPage,
    LogReviews,
)
from alertstation.http.routing import Route, permission

VIEW = permission("system.view_config")
BROADCAST = permission("eas.broadcast")
#: A note or correction is at most a few thousand characters.
BODY_LIMIT = 16 * 1024


def routes(station: Station) -> list[Route]:
    """Return the station log's routes."""
    export = LogExport(station)
    return [
        Route("GET", PAGE_PATH, LogPage(station), VIEW, summary="EAS station log (a month)"),
        Route(
            "GET",
            API_PATH,
            LogApi(station),
            VIEW,
            summary="Station log entries of a month (?month=YYYY-MM, kind, source, event)",
        ),
        Route(
            "GET",
            PAGE_PATH + "/export.csv",
            export,
            VIEW,
            suffix="csv",
            summary="Station log month as CSV, by local day",
        ),
        Route(
            "GET",
            PAGE_PATH + "/export.pdf",
            export,
            VIEW,
            suffix="pdf",
            summary="Station log month as PDF for an inspector, with the reviews",
        ),
        Route(
            "POST",
            NOTES_PATH,
            LogNotes(station),
            BROADCAST,
            summary="Add a station log note (missed test, equipment out of/back in service)",
            max_body=BODY_LIMIT,
        ),
        Route(
            "POST",
            CORRECTIONS_PATH,
            LogCorrections(station),
            BROADCAST,
            summary="Add a correction pointing at the entry it corrects; audited",
            max_body=BODY_LIMIT,
        ),
        Route(
            "POST",
            REVIEWS_PATH,
            LogReviews(station),
            BROADCAST,
            summary="Chief operator review of a month or a Sunday-Saturday week; audited",
            max_body=BODY_LIMIT,
        ),
    ]
