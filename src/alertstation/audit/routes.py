"""Routes of the audit log views."""

from alertstation.audit.resources import LedgerVerification, LogsExport, LogsPage
from alertstation.context import Station
from alertstation.http.routing import Route, permission


def routes(station: Station) -> list[Route]:
    """Return the audit log routes."""
    view = permission("system.view_config")
    export = LogsExport(station)
    return [
        Route("GET", "/logs", LogsPage(station), view, summary="Audit log"),
        Route("GET", "/logs/export.csv", export, view, suffix="csv", summary="Audit log as CSV"),
        Route("GET", "/logs/export.pdf", export, view, suffix="pdf", summary="Audit log as PDF"),
        Route(
            "GET",
            "/api/audit/verify",
            LedgerVerification(station),
            view,
            summary="Verify the audit ledger chain",
        ),
    ]
