"""HTTP resources of auto-forward and the weekly test (routes in ``forward_routes``).

Saves take a JSON object of the fields to change (others keep their value), run in one write
transaction and record ``config.updated`` with the names of the changed fields in it; when
that audit row cannot be written nothing is saved (500). The weekly test airs at once and
writes ``eas.broadcast`` afterwards, never holding up the air.
"""

from __future__ import annotations

from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.forward import config as forward_config
from alertstation.eas.forward import pending, rwt
from alertstation.eas.forward.rulebook import get_rule_book, save_rule_book
from alertstation.eas.forward.service import recent_queue
from alertstation.http.bodies import json_object

FORWARD_SECTION = "eas_forward"
RWT_SECTION = "eas_rwt"


def forward_view(station: Station) -> dict[str, Any]:
    """Return the auto-forward settings and the recent forward queue as JSON data."""
    with station.engine.connect() as conn:
        return {
            "settings": forward_config.get_forward_settings(conn).as_dict(),
            "queue": recent_queue(conn),
        }


class ForwardSettingsResource:
    """GET/PUT /admin/eas/forward: the auto-forward settings (and the recent queue)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = forward_view(self._station)

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        changes = forward_config.read_changes(json_object(req))
        actor = Actor.from_request(req)
        station = self._station
        with begin_write(station.engine) as conn:
            before = forward_config.get_forward_settings(conn)
            new, changed = forward_config.save_forward_settings(
                conn, changes, by=actor.username, now=station.clock()
            )
            station.ledger.record_config_update(
                conn,
                actor,
                FORWARD_SECTION,
                changed,
                propagate=True,
                before=before.as_dict(),
                after=new.as_dict(),
            )
        resp.media = {"settings": new.as_dict(), "changed": changed}


class RwtScheduleResource:
    """GET/PUT /admin/eas/rwt: the weekly test's schedule with its next slot."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with station.engine.connect() as conn:
            resp.media = rwt.schedule_view(conn, station.clock())

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        changes = rwt.read_changes(json_object(req))
        actor = Actor.from_request(req)
        station = self._station
        with begin_write(station.engine) as conn:
            now = station.clock()
            before, _ = rwt.get_schedule(conn)
            after, changed = rwt.save_schedule(conn, changes, by=actor.username, now=now)
            station.ledger.record_config_update(
                conn,
                actor,
                RWT_SECTION,
                changed,
                propagate=True,
                before=before.as_dict(),
                after=after.as_dict(),
            )
            view = rwt.schedule_view(conn, now)
        resp.media = {**view, "changed": changed}


class RwtTestResource:
    """POST /eas/rwt/test: air a weekly test now with the schedule's codes and station id."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with station.engine.connect() as conn:
            schedule, _ = rwt.get_schedule(conn)
        actor = Actor.from_request(req)
        result = rwt.air_rwt(
            station, schedule, aired_by=actor.username, actor=actor, target="eas_rwt:test"
        )
        message = result["message"]
        resp.media = {
            "sent": True,
            "message": message,
            "queue": message.get("queue"),
            "voice": result["voice"],
        }


class ForwardPage:
    """GET /eas/forward: auto-forward settings, the weekly test schedule, the recent queue."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        view = forward_view(station)
        with station.engine.connect() as conn:
            schedule = rwt.schedule_view(conn, station.clock())
            book = get_rule_book(conn).as_dict()
        station.templates.page(
            req,
            resp,
            "eas_forward.html",
            forward=view["settings"],
            queue=view["queue"],
            rwt=schedule,
            rule_book=book,
            weekdays=[day.capitalize() for day in rwt.WEEKDAYS],
            limits={
                "attention_min": forward_config.MIN_ATTENTION,
                "attention_max": forward_config.MAX_ATTENTION,
                "max_age": forward_config.MAX_AGE_LIMIT,
                "voice_text": rwt.MAX_VOICE_TEXT,
            },
        )


RULES_SECTION = "eas_forward_rules"


class ForwardRulesResource:
    """GET/PUT /api/eas/forward/rules: the ordered forwarding rules and the default mode."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = get_rule_book(conn).as_dict()

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        actor = Actor.from_request(req)
        station = self._station
        with begin_write(station.engine) as conn:
            before = get_rule_book(conn)
            book = save_rule_book(conn, body, by=actor.username, now=station.clock())
            changed = [
                name
                for name in ("rules", "default")
                if getattr(book, name) != getattr(before, name)
            ]
            station.ledger.record_config_update(
                conn,
                actor,
                RULES_SECTION,
                changed,
                propagate=True,
                before=before.as_dict(),
                after=book.as_dict(),
            )
        resp.media = {**book.as_dict(), "changed": changed}


class PendingCollection:
    """GET /api/eas/pending: what waits on the approval queue."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = {
                "items": pending.list_open(conn),
                "now": self._station.clock().isoformat(),
            }


class PendingAction:
    """POST /api/eas/pending/{item_id}/forward|hold|reject (eas.broadcast, audited)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def _act(self, req: falcon.Request, resp: falcon.Response, item_id: int, action: str) -> None:
        resp.media = {"item": pending.act(self._station, item_id, action, Actor.from_request(req))}

    def on_post_forward(self, req: falcon.Request, resp: falcon.Response, item_id: int) -> None:
        self._act(req, resp, item_id, "forward")

    def on_post_hold(self, req: falcon.Request, resp: falcon.Response, item_id: int) -> None:
        self._act(req, resp, item_id, "hold")

    def on_post_reject(self, req: falcon.Request, resp: falcon.Response, item_id: int) -> None:
        self._act(req, resp, item_id, "reject")


class PendingPage:
    """GET /eas/pending: the approval queue with each item's countdown."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with station.engine.connect() as conn:
            items = pending.list_open(conn)
        station.templates.page(
            req, resp, "eas_pending.html", items=items, now=station.clock().isoformat()
        )
