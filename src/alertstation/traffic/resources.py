"""Traffic resources: the analytics settings (more below as the reports land)."""

from __future__ import annotations

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.http.bodies import json_object
from alertstation.traffic import settings


class TrafficSettingsResource:
    """GET/PUT /api/traffic/settings: every traffic analytics setting.

    PUT takes any subset of the GET form's ``settings``; the change is saved with a
    ``config.updated`` row (section ``traffic``, the changed field names only) and applies in
    every process within about a second (in this one at once).
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            current = settings.load_settings(conn)
        resp.media = {"settings": current.as_dict()}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        with begin_write(station.engine) as conn:
            saved, changed = settings.save_settings(conn, body, station.clock())
            station.ledger.record_config_update(
                conn, Actor.from_request(req), settings.SECTION, changed
            )
        settings.settings_cache_for(station.engine).clear()
        resp.media = {"settings": saved.as_dict(), "changed": changed}
