"""Host firewall bridge resources: status, configure (save and apply), resync, service, ssh-unban.

Every change writes an audit row: ``config.updated`` (section ``hostban``) for settings,
``hostban.resync``, ``hostban.service`` and ``hostban.ssh_unban`` otherwise. Addresses are
validated before any command sees them.
"""

from __future__ import annotations

from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import json_object
from alertstation.security.hostban import service as hs
from alertstation.security.hostban.fail2ban import check_address

SERVICE_ACTIONS = ("start", "stop", "restart")


def _report(report: hs.SyncReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {
        "mirrorable": report.mirrorable,
        "mirrored": report.mirrored,
        "firewall_pending": report.firewall_pending,
        "sync_error": report.error,
    }


class HostbanStatus:
    """GET /admin/hostban/status: service, toggles, jail state, counts, actuator_error."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = hs.status(self._station)


class HostbanConfigure:
    """POST /admin/hostban/configure: save the settings and, unless apply=false, apply them.

    A changed mirror toggle acts right away (also with apply=false). A privileged write or
    command that is refused answers 500 ``privilege_denied`` naming the update script.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        apply = body.pop("apply", True)
        if not isinstance(apply, bool):
            raise Invalid("apply must be true or false", field="apply")
        station = self._station
        with begin_write(station.engine) as conn:
            before = hs.load_settings(conn)
            settings, changed = hs.save_settings(conn, body, station.clock())
            station.ledger.record_config_update(
                conn,
                Actor.from_request(req),
                "hostban",
                changed,
                before=before.as_dict(),
                after=settings.as_dict(),
            )
        # The toggle takes effect at once, even without apply: off empties the jail, on re-pushes.
        report = hs.mirror_toggled(station, settings) if "mirror_enabled" in changed else None
        if apply:
            report = hs.apply(station, settings)
        resp.media = {
            "settings": settings.as_dict(),
            "changed": changed,
            "applied": apply,
            "sync": _report(report),
        }


class HostbanResync:
    """POST /admin/hostban/resync: import SSH bans, re-apply them and re-push the mirror."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        report = hs.heal(station, flush_when_off=True)
        station.ledger.record_now(
            station.engine, Actor.from_request(req), "hostban.resync", details=_report(report)
        )
        resp.media = {"sync": _report(report)}


class HostbanService:
    """POST /admin/hostban/service: start, stop or restart the daemon (body ``action``)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        action = json_object(req).get("action")
        if action not in SERVICE_ACTIONS:
            raise Invalid(f"action must be one of {', '.join(SERVICE_ACTIONS)}", field="action")
        station = self._station
        station.ledger.record_now(
            station.engine, Actor.from_request(req), "hostban.service", target=action
        )
        report = hs.control(station, action)
        resp.media = {"action": action, "sync": _report(report)}


class HostbanSshUnban:
    """POST /admin/hostban/ssh-unban: lift one address's SSH jail ban (body ``ip``)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        value = json_object(req).get("ip")
        try:
            address = check_address(value if isinstance(value, str) else "")
        except ValueError:
            raise Invalid("ip must be one IP address", field="ip") from None
        station = self._station
        deactivated = hs.ssh_unban(station, address)
        station.ledger.record_now(
            station.engine,
            Actor.from_request(req),
            "hostban.ssh_unban",
            target=address,
            details={"deactivated": deactivated},
        )
        resp.media = {"ip": address, "deactivated": deactivated}
