"""Remove a ban list or allowlist entry: the one path shared by the web unban and the CLI.

``remove_filter`` deletes the entry, writes its audit row (``ban.deleted`` or
``allowlist.deleted``) and bumps the ``bans`` generation in one transaction, then runs
``after_change``: this process's gate table is rebuilt now (others follow within about a second)
and the ban cache's change listeners run; ``app.build_station`` makes the host firewall mirror
one of them, so the change reaches fail2ban when that is on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.security.bans import service
from alertstation.security.bans.entries import IpFilter, audit_action

if TYPE_CHECKING:
    from alertstation.context import Station


def audit_details(entry: IpFilter, **extra: Any) -> dict[str, Any]:
    """Return the details of a ban list audit row."""
    return {
        "id": entry.id,
        "value": entry.value,
        "kind": entry.kind,
        "active": entry.active,
        "expires_at": entry.expires_at.isoformat() if entry.expires_at else None,
        "source": entry.source,
        **extra,
    }


def after_change(station: Station) -> None:
    """Rebuild this worker's ban table now and run the change listeners (the firewall mirror)."""
    station.bans.changed()


def remove_filter(
    station: Station,
    filter_id: int,
    actor: Actor,
    *,
    requester_ip: str,
    confirm_lockout: bool = False,
) -> IpFilter:
    """Remove one entry with its audit row, then apply the change; return the entry."""
    with begin_write(station.engine) as conn:
        entry = service.delete_filter(
            conn,
            filter_id,
            now=station.clock(),
            requester_ip=requester_ip,
            confirm_lockout=confirm_lockout,
        )
        station.ledger.record(
            conn,
            actor,
            audit_action(entry.kind, "deleted"),
            target=entry.value,
            details=audit_details(entry, confirm_lockout=confirm_lockout),
        )
    after_change(station)
    return entry
