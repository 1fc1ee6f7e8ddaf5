"""Environment variables page and API."""

from __future__ import annotations

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import json_object
from alertstation.settings import parse_receiver_allowlist, process_environment
from alertstation.settings_admin.service import (
    boundary_variables,
    boundary_warning,
    describe_variables,
    save_variables,
)

ADMIN = "admin"


def _is_admin(req: falcon.Request) -> bool:
    """Tell whether the caller has the admin role (admin-only variables need it)."""
    return str(getattr(getattr(req.context, "user", None), "role", "")) == ADMIN


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
        changed = save_variables(station.settings.data_dir, changes, is_admin=_is_admin(req))
        moved = boundary_variables(changed)
        if changed:
            with begin_write(station.engine) as conn:
                station.ledger.record_config_update(
                    conn, Actor.from_request(req), "environment", changed, trust_boundary=moved
                )
        resp.media = {
            "changed": changed,
            "restart_required": bool(changed),
            "warnings": [{"name": name, "message": boundary_warning(name)} for name in moved],
        }


class EnvironmentPage:
    """GET /admin/environment: the variables as a page."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        states = describe_variables(self._station.settings.data_dir, process_environment())
        self._station.templates.page(
            req, resp, "environment.html", variables=states, is_admin=_is_admin(req)
        )


RECEIVER_ALLOWLIST = "ALERTSTATION_RECEIVER_ALLOWLIST"


class ReceiverAllowlistPage:
    """GET /admin/receiver_allowlist: the programs radio receivers may run; admins change them.

    The form saves the ``ALERTSTATION_RECEIVER_ALLOWLIST`` variable through
    ``PUT /api/environment/variables`` (admin only there too), applied on restart.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        states = describe_variables(self._station.settings.data_dir, process_environment())
        [state] = [state for state in states if state.name == RECEIVER_ALLOWLIST]
        saved = parse_receiver_allowlist(state.value or "") if state.value else ()
        self._station.templates.page(
            req,
            resp,
            "receiver_allowlist.html",
            variable=state,
            in_effect=list(self._station.settings.receiver_allowlist),
            entries=list(saved),
            is_admin=_is_admin(req),
        )
