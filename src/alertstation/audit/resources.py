"""Resources of the audit log views: the page, its CSV and PDF exports and the chain check."""

from __future__ import annotations

from datetime import timedelta

import falcon

from alertstation.audit import service
from alertstation.audit.export import events_to_csv, events_to_pdf
from alertstation.audit.window import export_window_days
from alertstation.context import Station
from alertstation.db.types import utcnow
from alertstation.errors import Invalid

QUICK_LINKS = (("Configuration changes", "config.updated"),)


def _filter(req: falcon.Request) -> service.LogFilter:
    return service.parse_log_filter(
        req.get_param("type"), req.get_param("action"), req.get_param("limit")
    )


def _attachment(resp: falcon.Response, extension: str) -> None:
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    resp.downloadable_as = f"audit-log-{stamp}.{extension}"
    resp.cache_control = ["no-store"]


class LogsPage:
    """GET /logs: the audit log with an action filter and export links."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        chosen = _filter(req)
        with self._station.engine.connect() as conn:
            events = service.list_events(conn, action=chosen.action, limit=chosen.limit)
            actions = service.distinct_actions(conn)
        self._station.templates.page(
            req,
            resp,
            "logs.html",
            events=events,
            actions=actions,
            chosen=chosen,
            quick_links=QUICK_LINKS,
            max_limit=service.MAX_LIMIT,
        )


class LogsExport:
    """GET /logs/export.csv and /logs/export.pdf: the same filtered rows as a file.

    Only events inside the saved export window (``audit_export_days``) are exported.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def _events(self, chosen: service.LogFilter) -> tuple[list[service.AuditEvent], int]:
        """Return the filtered events inside the saved export window, and the window's days."""
        with self._station.engine.connect() as conn:
            days = export_window_days(conn)
            since = self._station.clock() - timedelta(days=days)
            events = service.list_events(
                conn, action=chosen.action, limit=chosen.limit, since=since
            )
        return events, days

    def on_get_csv(self, req: falcon.Request, resp: falcon.Response) -> None:
        chosen = _filter(req)
        events, _ = self._events(chosen)
        resp.text = events_to_csv(events)
        resp.content_type = "text/csv; charset=utf-8"
        _attachment(resp, "csv")

    def on_get_pdf(self, req: falcon.Request, resp: falcon.Response) -> None:
        chosen = _filter(req)
        events, days = self._events(chosen)
        resp.data = events_to_pdf(
            events, filters=f"{chosen.describe()}, last {days} days", generated_at=utcnow()
        )
        resp.content_type = "application/pdf"
        _attachment(resp, "pdf")


class LedgerVerification:
    """GET /api/audit/verify: walk the whole chain (optionally against ?checkpoint=...)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        checkpoint = req.get_param("checkpoint")
        try:
            result = self._station.ledger.verify_now(self._station.engine, checkpoint)
        except ValueError as ex:
            raise Invalid(str(ex), field="checkpoint") from None
        resp.media = {
            "ok": result.ok,
            "rows": result.rows,
            "first_bad_id": result.first_bad_id,
            "problem": result.problem or None,
            "summary": result.summary(),
        }
