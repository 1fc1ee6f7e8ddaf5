"""Environment variables page and API."""

from __future__ import annotations

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import json_object
from alertstation.settings import process_environment
from alertstation.settings_admin.service import describe_variables, save_variables


class EnvironmentVariables:
    """GET/PUT /api/environment/variables: saved station variables, secrets redacted."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        states = describe_variables(self._station.settings.data_dir, process_environment())
        resp.media = {"variables": [state.as_dict() for state in states]}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        changes = body.get("variables")
        if not isinstance(changes, dict):
            raise Invalid('send {"variables": {"NAME": "value" or null}}', field="variables")
        station = self._station
        changed = save_variables(station.settings.data_dir, changes)
        if changed:
            with begin_write(station.engine) as conn:
                station.ledger.record_config_update(
                    conn, Actor.from_request(req), "environment", changed
                )
        resp.media = {"changed": changed, "restart_required": bool(changed)}


class EnvironmentPage:
    """GET /admin/environment: the variables as a page."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        states = describe_variables(self._station.settings.data_dir, process_environment())
        self._station.templates.page(req, resp, "environment.html", variables=states)
