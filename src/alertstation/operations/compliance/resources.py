"""HTTP resources of monitoring compliance: the page, its JSON, and the settings save.

The save takes a JSON object of the fields to change (``silence_days``, ``assigned_sources``),
runs in one write transaction and records ``config.updated`` (section ``compliance``) in it;
when that row cannot be written nothing is saved.
"""

from __future__ import annotations

from typing import Any, Final

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.http.bodies import json_object
from alertstation.operations.compliance.service import overview
from alertstation.operations.compliance.settings import save_compliance_settings
from alertstation.operations.pages import NoStorePage

SECTION: Final[str] = "compliance"


def compliance_view(station: Station) -> dict[str, Any]:
    """Return the compliance overview at the station's clock."""
    with station.engine.connect() as conn:
        return overview(conn, station.clock())


class CompliancePage(NoStorePage):
    """GET /eas/compliance: assigned sources, the station's own tests, deadlines, alarms."""

    template = "eas_compliance.html"

    def context(self, req: falcon.Request) -> dict[str, Any]:
        return {"view": compliance_view(self._station)}


class ComplianceResource:
    """GET /api/eas/compliance: the overview as JSON."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = compliance_view(self._station)


class ComplianceSettingsResource:
    """PUT /api/eas/compliance/settings: assigned sources and silence days (audited)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        actor = Actor.from_request(req)
        station = self._station
        with begin_write(station.engine) as conn:
            before, after = save_compliance_settings(
                conn, body, by=actor.username, now=station.clock()
            )
            old, new = before.as_dict(), after.as_dict()
            changed = sorted(name for name in new if old[name] != new[name])
            station.ledger.record_config_update(
                conn, actor, SECTION, changed, propagate=True, before=old, after=new
            )
        resp.media = {"settings": after.as_dict(), "changed": changed}
