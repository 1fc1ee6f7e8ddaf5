"""HTTP resources of the airing settings, Stop and the queue's Remove (routes in
``alertstation.eas.airing.routes``).

``/admin/eas_settings`` answers a browser with the settings page and an API client with JSON;
``PUT`` saves (JSON) and records ``config.updated`` with the changed field names in the same
transaction, so the Icecast source password appears in the audit row as its field name only.
Regenerating the password records ``config.updated`` as an action, with no field and no value.
"""

from __future__ import annotations

from typing import Final

import falcon

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import CONFIG_UPDATED
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing import broadcast
from alertstation.eas.airing import settings as settings_airing
from alertstation.http.bodies import json_object, optional_bool
from alertstation.http.errors import wants_html

SETTINGS_PATH: Final[str] = "/admin/eas_settings"
REGENERATE_PATH: Final[str] = SETTINGS_PATH + "/icecast/regenerate-password"
STOP_PATH: Final[str] = "/api/eas/airing/stop"
QUEUE_ITEM_PATH: Final[str] = "/api/eas/airing/queue/{item_id:int}"
SECTION: Final[str] = "eas_settings"
PASSWORD_REGENERATED: Final[str] = "icecast_password_regenerated"


class EasSettings:
    """GET /admin/eas_settings (page or JSON) and PUT (save, audited, password redacted)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            settings = settings_airing.load(conn)
        resp.set_header("Cache-Control", "no-store")
        if wants_html(req):
            self._station.templates.page(
                req,
                resp,
                "eas_settings.html",
                settings=settings.as_dict(),
                sample_rates=settings_airing.SAMPLE_RATES,
            )
            return
        resp.media = {
            "settings": settings.as_dict(),
            "sample_rates": list(settings_airing.SAMPLE_RATES),
        }

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            before = settings_airing.load(conn)
            settings, changed = settings_airing.save(
                conn, body, updated_by=actor.username, now=station.clock()
            )
            station.ledger.record_config_update(
                conn, actor, SECTION, changed, before=before.as_dict(), after=settings.as_dict()
            )
        resp.set_header("Cache-Control", "no-store")
        resp.media = {"settings": settings.as_dict(), "changed": changed}


class RegenerateIcecastPassword:
    """POST /admin/eas_settings/icecast/regenerate-password: a new source password, shown once."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            settings, password = settings_airing.regenerate_password(
                conn, updated_by=actor.username, now=station.clock()
            )
            station.ledger.record(
                conn,
                actor,
                CONFIG_UPDATED,
                target=SECTION,
                details={"action": PASSWORD_REGENERATED},
            )
        resp.set_header("Cache-Control", "no-store")
        resp.media = {"password": password, "settings": settings.as_dict()}


class AiringStop:
    """POST /api/eas/airing/stop ``{"clear_queue": false}``: stop the message on the air."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req) if req.content_length else {}
        clear = bool(optional_bool(body, "clear_queue"))
        resp.media = broadcast.stop(self._station, Actor.from_request(req), clear_queue=clear)


class AiringQueueItem:
    """DELETE /api/eas/airing/queue/{id}: take a queued message off the queue before it airs."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_delete(self, req: falcon.Request, resp: falcon.Response, item_id: int) -> None:
        resp.media = broadcast.remove(self._station, item_id, Actor.from_request(req))
