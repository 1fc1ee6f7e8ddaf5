"""HTTP resources of the station log (routes in ``alertstation.eas.log.routes``).

Reading (the page, ``GET /api/eas/log`` and the exports) needs ``system.view_config``; notes,
corrections and reviews need ``eas.broadcast`` and are audited in the transaction that adds
them (``eas.log.note``, ``eas.log.correction``, ``eas.log.reviewed``). No resource updates or
deletes an entry.
"""

from __future__ import annotations

from typing import Final

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.log import service
from alertstation.eas.log.export import month_to_csv, month_to_pdf
from alertstation.eas.log.record import KINDS
from alertstation.errors import FieldError
from alertstation.http.bodies import json_object
from alertstation.settings_admin.sections import station_time_zone

PAGE_PATH: Final[str] = "/eas/log"
API_PATH: Final[str] = "/api/eas/log"
NOTES_PATH: Final[str] = API_PATH + "/notes"
CORRECTIONS_PATH: Final[str] = API_PATH + "/corrections"
REVIEWS_PATH: Final[str] = API_PATH + "/reviews"
NOTE_ACTION: Final[str] = "eas.log.note"
CORRECTION_ACTION: Final[str] = "eas.log.correction"
REVIEW_ACTION: Final[str] = "eas.log.reviewed"


def _read(station: Station, req: falcon.Request, *, filtered: bool = True) -> service.MonthLog:
    """The month a request names (and, unless ``filtered`` is False, its filters)."""
    with station.engine.connect() as conn:
        try:
            chosen = (
                service.LogFilter.parse(
                    req.get_param("kind"), req.get_param("source"), req.get_param("event")
                )
                if filtered
                else None
            )
            zone = station_time_zone(conn)
            return service.read_month(conn, req.get_param("month"), zone, station.clock(), chosen)
        except FieldError as ex:
            raise ex.as_app_error() from None


class LogPage:
    """GET /eas/log: the month's entries with a month picker and filters."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        log = _read(station, req)
        with station.engine.connect() as conn:
            known_sources = service.sources(conn)
        resp.cache_control = ["no-store"]
        station.templates.page(
            req,
            resp,
            "eas_log.html",
            month=log.month,
            chosen=log.chosen,
            entries=log.entries,
            reviews=log.reviews,
            kinds=KINDS,
            sources=known_sources,
            topics=service.NOTE_TOPICS,
        )


class LogApi:
    """GET /api/eas/log?month=YYYY-MM&kind=&source=&event=: the month's entries as ``items``."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        log = _read(self._station, req)
        month = log.month
        resp.cache_control = ["no-store"]
        resp.media = {
            "month": month.label,
            "time_zone": getattr(month.zone, "key", str(month.zone)),
            "start": month.start.isoformat(),
            "end": month.end.isoformat(),
            "items": log.entries,
            "reviews": log.reviews,
        }


class LogExport:
    """GET /eas/log/export.csv and /eas/log/export.pdf?month=YYYY-MM: the whole month, by day."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get_csv(self, req: falcon.Request, resp: falcon.Response) -> None:
        log = _read(self._station, req, filtered=False)
        month = log.month
        resp.text = month_to_csv(log.entries, month)
        resp.content_type = "text/csv; charset=utf-8"
        resp.downloadable_as = f"eas-station-log-{month.label}.csv"
        resp.cache_control = ["no-store"]

    def on_get_pdf(self, req: falcon.Request, resp: falcon.Response) -> None:
        log = _read(self._station, req, filtered=False)
        month = log.month
        resp.data = month_to_pdf(
            log.entries, log.reviews, month, generated_at=self._station.clock()
        )
        resp.content_type = "application/pdf"
        resp.downloadable_as = f"eas-station-log-{month.label}.pdf"
        resp.cache_control = ["no-store"]


class LogNotes:
    """POST /api/eas/log/notes ``{"topic", "text", "occurred_at"?, "source"?}``: add a note."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            try:
                entry = service.add_note(conn, body, by=actor.username or "", now=station.clock())
            except FieldError as ex:
                raise ex.as_app_error() from None
            station.ledger.record(
                conn,
                actor,
                NOTE_ACTION,
                target=f"eas_log:{entry['id']}",
                details={"topic": entry["result"], "at": entry["at"]},
                propagate=True,
            )
        resp.status = falcon.HTTP_201
        resp.media = {"entry": entry}


class LogCorrections:
    """POST /api/eas/log/corrections ``{"corrects": id, "text"}``: add a correction entry."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            try:
                entry = service.add_correction(
                    conn, body.get("corrects"), body, by=actor.username or "", now=station.clock()
                )
            except FieldError as ex:
                raise ex.as_app_error() from None
            station.ledger.record(
                conn,
                actor,
                CORRECTION_ACTION,
                target=f"eas_log:{entry['id']}",
                details={"corrects": entry["corrects_id"]},
                propagate=True,
            )
        resp.status = falcon.HTTP_201
        resp.media = {"entry": entry}


class LogReviews:
    """POST /api/eas/log/reviews ``{"period": "month", "month": "YYYY-MM"}`` or
    ``{"period": "week", "week_start": "YYYY-MM-DD"}`` (a Sunday), ``"note"`` optional."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            now = station.clock()
            try:
                period = service.parse_period(body, station_time_zone(conn), now)
                entry = service.add_review(
                    conn, period, by=actor.username or "", now=now, note=body.get("note") or None
                )
            except FieldError as ex:
                raise ex.as_app_error() from None
            station.ledger.record(
                conn,
                actor,
                REVIEW_ACTION,
                target=f"eas_log:{entry['id']}",
                details={
                    "period": period.kind,
                    "first_day": period.first.isoformat(),
                    "last_day": period.last.isoformat(),
                },
                propagate=True,
            )
        resp.status = falcon.HTTP_201
        resp.media = {"entry": entry}
