"""Ban list and allowlist resources: list, add, change and remove entries.

Each change runs in one write transaction with its audit row (``ban.created``, ``ban.updated``,
``ban.deleted`` or ``allowlist.*``) and the ``bans`` generation bump; afterwards this process's
gate table is dropped so the change applies here at once (other processes follow within about a
second), and the change is mirrored to the host firewall when that is on (a daemon that is down
never fails the request: the worker's self-heal pushes it later). ``confirm_lockout`` may come
in the JSON body or as a query parameter (DELETE).
"""

from __future__ import annotations

from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import json_object, optional_bool
from alertstation.security.bans import service
from alertstation.security.bans.entries import audit_action, filter_changes, new_filter
from alertstation.security.bans.removal import after_change, remove_filter
from alertstation.security.bans.removal import audit_details as _audit_details
from alertstation.security.bans.tables import KINDS
from alertstation.security.geoip.lookup import locator_for


def _confirm_lockout(req: falcon.Request, body: dict[str, Any]) -> bool:
    """Read confirm_lockout from the body, else from the query string; default false."""
    if "confirm_lockout" in body:
        return bool(optional_bool(body, "confirm_lockout"))
    try:
        return bool(req.get_param_as_bool("confirm_lockout", default=False))
    except falcon.HTTPBadRequest:
        raise Invalid("confirm_lockout must be true or false", field="confirm_lockout") from None


class IpFilterCollection:
    """GET/POST /security/ip-filters: both lists; add an entry."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        kind = req.get_param("kind")
        if kind is not None and kind not in KINDS:
            raise Invalid(f"kind must be one of {', '.join(KINDS)}", field="kind")
        station = self._station
        now = station.clock()
        with begin_write(station.engine) as conn:
            expired = service.deactivate_expired(conn, now)
            entries = service.list_filters(conn, kind)
            mode = service.allowlist_mode(conn, now)
        if expired:
            station.bans.clear()
        # A location block only where the location database resolves a public single address.
        locate = locator_for(station.settings.data_dir).locate
        resp.media = {
            "filters": [entry.as_dict(now, locate(entry.value)) for entry in entries],
            "allowlist_mode": mode,
            "client_ip": req.context.client_ip,
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        confirm = _confirm_lockout(req, body)
        fields = {name: value for name, value in body.items() if name != "confirm_lockout"}
        station = self._station
        now = station.clock()
        entry = new_filter(fields, now)
        with begin_write(station.engine) as conn:
            created = service.create_filter(
                conn,
                entry,
                now=now,
                requester_ip=req.context.client_ip,
                confirm_lockout=confirm,
            )
            station.ledger.record(
                conn,
                Actor.from_request(req),
                audit_action(created.kind, "created"),
                target=created.value,
                details=_audit_details(created, reason=created.reason, confirm_lockout=confirm),
            )
        after_change(station)
        resp.status = falcon.HTTP_201
        resp.media = {"filter": created.as_dict(now)}


class IpFilterItem:
    """PATCH/DELETE /security/ip-filters/{id}: toggle or edit an entry; remove it.

    Falcon passes the path field as ``id`` (the route template is ``{id:int}``).
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_patch(self, req: falcon.Request, resp: falcon.Response, id: int) -> None:
        body = json_object(req)
        confirm = _confirm_lockout(req, body)
        fields = {name: value for name, value in body.items() if name != "confirm_lockout"}
        station = self._station
        now = station.clock()
        changes = filter_changes(fields, now)
        with begin_write(station.engine) as conn:
            entry, changed = service.update_filter(
                conn,
                id,
                changes,
                now=now,
                requester_ip=req.context.client_ip,
                confirm_lockout=confirm,
            )
            if changed:
                station.ledger.record(
                    conn,
                    Actor.from_request(req),
                    audit_action(entry.kind, "updated"),
                    target=entry.value,
                    details=_audit_details(entry, fields=changed, confirm_lockout=confirm),
                )
        if changed:
            after_change(station)
        resp.media = {"filter": entry.as_dict(now), "changed": changed}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, id: int) -> None:
        body = json_object(req) if req.content_length else {}
        entry = remove_filter(
            self._station,
            id,
            Actor.from_request(req),
            requester_ip=req.context.client_ip,
            confirm_lockout=_confirm_lockout(req, body),
        )
        resp.media = {"deleted": entry.id}
