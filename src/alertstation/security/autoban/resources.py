"""Automatic-ban settings resource: read them, change them (audited ``config.updated``)."""

from __future__ import annotations

from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.http.bodies import json_object
from alertstation.security.autoban import settings
from alertstation.security.bans.tables import SOURCES


def _labels() -> dict[str, str]:
    return {source: SOURCES[source] for source in settings.DETECTORS}


class AutobanSettingsResource:
    """GET/PUT /admin/security/autoban: every detector's rule and the event retention.

    PUT takes any part of the GET form's ``settings`` (``retention_days``, ``detectors`` by
    source with some of their fields); the change is saved with a ``config.updated`` row
    (section ``autoban``, the changed field names) and applies in every process within about a
    second (in this one at once).
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            current = settings.load_settings(conn)
        resp.media = {"settings": current.as_dict(), "labels": _labels(), "limits": _limits()}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        with begin_write(station.engine) as conn:
            before = settings.load_settings(conn)
            saved, changed = settings.save_settings(conn, body, station.clock())
            station.ledger.record_config_update(
                conn,
                Actor.from_request(req),
                settings.SECTION,
                changed,
                before=_audit_snapshot(before),
                after=_audit_snapshot(saved),
            )
        station.autoban_settings.clear()
        resp.media = {"settings": saved.as_dict(), "changed": changed}


def _audit_snapshot(values: settings.AutobanSettings) -> dict[str, Any]:
    """Return the settings with each detector at the top (``flood.threshold``, as named)."""
    shown = values.as_dict()
    return {"retention_days": shown["retention_days"], **shown["detectors"]}


def _limits() -> dict[str, object]:
    return {
        "threshold": [1, settings.MAX_THRESHOLD],
        "window_seconds": [1, settings.MAX_WINDOW_SECONDS],
        "ban_seconds": [0, settings.MIN_BAN_SECONDS, settings.MAX_BAN_SECONDS],
        "retention_days": [1, settings.MAX_RETENTION_DAYS],
        "paths": settings.MAX_PATHS,
    }
