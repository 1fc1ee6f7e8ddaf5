"""Keep the ban list and allowlist: read, add, change, remove and expire entries; guard sign-in.

Every function that changes ``ip_filters`` bumps the ``bans`` generation in the caller's
transaction, so each process's ban gate rebuilds within about a second and a rolled-back change
is never seen. Changes that would lock the requester out raise ``Conflict`` with the code
``lockout_risk`` (after the change, inside the transaction, so the caller's rollback undoes it)
unless the caller passed ``confirm_lockout``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, Row, select
from sqlalchemy.exc import IntegrityError

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import LOGIN_FAILURE, AuditLedger
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.db.types import as_utc
from alertstation.errors import Conflict, Forbidden, Invalid, NotFound
from alertstation.security.bans.entries import EDITABLE, IpFilter, NewFilter, check_kind
from alertstation.security.bans.tables import ALLOWLIST, BANS_GENERATION, ip_filters
from alertstation.security.bantable import BanTable

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger("alertstation.security")

LOCKOUT_RISK = "lockout_risk"
LOGIN_NOT_ALLOWED = "login_not_allowed"


def _filter(row: Row[Any]) -> IpFilter:
    return IpFilter(
        id=row.id,
        value=row.value,
        kind=row.kind,
        active=bool(row.active),
        expires_at=as_utc(row.expires_at),
        created_at=as_utc(row.created_at),  # type: ignore[arg-type]
        reason=row.reason,
        description=row.description,
        source=row.source,
    )


# --- reading --------------------------------------------------------------------------------


def list_filters(conn: Connection, kind: str | None = None) -> list[IpFilter]:
    """Return entries, newest first, of one kind or both."""
    query = select(ip_filters).order_by(ip_filters.c.id.desc())
    if kind is not None:
        query = query.where(ip_filters.c.kind == check_kind(kind))
    return [_filter(row) for row in conn.execute(query)]


def get_filter(conn: Connection, filter_id: int) -> IpFilter:
    """Return one entry; NotFound when there is none with that id."""
    row = conn.execute(select(ip_filters).where(ip_filters.c.id == filter_id)).first()
    if row is None:
        raise NotFound(f"no ban list entry with id {filter_id}")
    return _filter(row)


def enforced_filters(conn: Connection, kind: str, now: datetime) -> list[IpFilter]:
    """Return the active, unexpired entries of one kind (expiry compared in UTC, naive = UTC)."""
    query = select(ip_filters).where(ip_filters.c.kind == kind, ip_filters.c.active.is_(True))
    entries = [_filter(row) for row in conn.execute(query.order_by(ip_filters.c.id))]
    return [entry for entry in entries if not entry.is_expired(now)]


def allowlist_mode(conn: Connection, now: datetime) -> bool:
    """Tell whether sign-in is limited to allowlisted addresses right now."""
    return bool(enforced_filters(conn, ALLOWLIST, now))


def login_allowed(conn: Connection, client_ip: str, now: datetime) -> bool:
    """Tell whether ``client_ip`` may sign in: no allowlist in force, or one covers it.

    Loopback gets no exemption here (unlike at the ban gate).
    """
    allowlist = enforced_filters(conn, ALLOWLIST, now)
    return not allowlist or _covers(allowlist, client_ip)


def is_allowlisted(conn: Connection, client_ip: str, now: datetime) -> bool:
    """Tell whether an enforced allowlist entry covers ``client_ip``."""
    allowlist = enforced_filters(conn, ALLOWLIST, now)
    return bool(allowlist) and _covers(allowlist, client_ip)


def _covers(entries: list[IpFilter], address: str) -> bool:
    try:
        return BanTable(entries).contains(address)
    except ValueError:
        return False  # text that is not an address is covered by nothing


# --- changing -------------------------------------------------------------------------------


def create_filter(
    conn: Connection,
    entry: NewFilter,
    *,
    now: datetime,
    requester_ip: str,
    confirm_lockout: bool = False,
) -> IpFilter:
    """Add an entry; Conflict when it exists, or (unconfirmed) when it would lock the caller out."""
    _require_unique(conn, entry.kind, entry.value)
    values = {**asdict(entry), "created_at": as_utc(now)}
    try:
        with conn.begin_nested():
            new_id = conn.execute(ip_filters.insert().values(**values)).inserted_primary_key[0]
    except IntegrityError:
        raise _duplicate(entry.kind, entry.value) from None
    created = get_filter(conn, int(new_id))
    bump_generation(conn, BANS_GENERATION)
    if not confirm_lockout:
        check_lockout(conn, created, requester_ip=requester_ip, now=now)
    return created


def update_filter(
    conn: Connection,
    filter_id: int,
    changes: Mapping[str, Any],
    *,
    now: datetime,
    requester_ip: str,
    confirm_lockout: bool = False,
) -> tuple[IpFilter, list[str]]:
    """Apply validated ``changes`` (fields of ``EDITABLE``); return the entry and changed names."""
    unknown = set(changes) - EDITABLE
    if unknown:
        raise Invalid(f"cannot change {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    before = get_filter(conn, filter_id)
    after = replace(before, **changes)
    if changes.get("active") is True and after.is_expired(now):
        raise Invalid(
            "the entry has expired; give a new expires_at or duration_minutes to enable it",
            field="expires_at",
        )
    changed = sorted(name for name in changes if getattr(before, name) != getattr(after, name))
    if not changed:
        return before, []
    if "value" in changed:
        _require_unique(conn, after.kind, after.value)
    try:
        with conn.begin_nested():
            conn.execute(
                ip_filters.update()
                .where(ip_filters.c.id == filter_id)
                .values(**{name: getattr(after, name) for name in changed})
            )
    except IntegrityError:
        raise _duplicate(after.kind, after.value) from None
    bump_generation(conn, BANS_GENERATION)
    if not confirm_lockout:
        check_lockout(conn, after, requester_ip=requester_ip, now=now)
    return get_filter(conn, filter_id), changed


def delete_filter(
    conn: Connection,
    filter_id: int,
    *,
    now: datetime,
    requester_ip: str,
    confirm_lockout: bool = False,
) -> IpFilter:
    """Remove an entry and return it; removing an allowlist entry may be a lockout risk."""
    entry = get_filter(conn, filter_id)
    conn.execute(ip_filters.delete().where(ip_filters.c.id == filter_id))
    bump_generation(conn, BANS_GENERATION)
    if not confirm_lockout and entry.kind == ALLOWLIST:
        check_allowlist_lockout(conn, requester_ip=requester_ip, now=now)
    return entry


def deactivate_expired(conn: Connection, now: datetime) -> int:
    """Turn off every active entry whose expiry has passed; return how many (naive = UTC).

    Expiry is compared in Python rather than SQL so timestamps stored without an offset by old
    code compare as UTC on either backend.
    """
    query = select(ip_filters.c.id, ip_filters.c.expires_at).where(
        ip_filters.c.active.is_(True), ip_filters.c.expires_at.is_not(None)
    )
    limit = as_utc(now)
    expired = [row.id for row in conn.execute(query) if as_utc(row.expires_at) <= limit]  # type: ignore[operator]
    if not expired:
        return 0
    conn.execute(ip_filters.update().where(ip_filters.c.id.in_(expired)).values(active=False))
    bump_generation(conn, BANS_GENERATION)
    return len(expired)


def deactivate_expired_job(station: Station) -> None:
    """Worker job: deactivate expired entries (the gate already ignores them)."""
    with begin_write(station.engine) as conn:
        count = deactivate_expired(conn, station.clock())
    if count:
        log.info("deactivated %d expired ban list entries", count)


def _require_unique(conn: Connection, kind: str, value: str) -> None:
    clash = select(ip_filters.c.id).where(ip_filters.c.kind == kind, ip_filters.c.value == value)
    if conn.execute(clash).first() is not None:
        raise _duplicate(kind, value)


def _duplicate(kind: str, value: str) -> Conflict:
    return Conflict(f"{value} is already on the {kind}", code="duplicate", value=value, kind=kind)


# --- lockout and sign-in guards -------------------------------------------------------------


def is_loopback(address: str) -> bool:
    """Tell whether a normalised client address is loopback (127.0.0.0/8 or ::1)."""
    return address.startswith("127.") or address == "::1"


def check_lockout(conn: Connection, entry: IpFilter, *, requester_ip: str, now: datetime) -> None:
    """Raise lockout_risk when a just-changed entry would shut the requester out.

    A blocklist entry that covers the requester (not loopback, which the gate never blocks), or
    an allowlist left in force without covering the requester (loopback included: sign-in in
    allowlist mode has no loopback exemption).
    """
    if entry.kind == ALLOWLIST:
        check_allowlist_lockout(conn, requester_ip=requester_ip, now=now)
        return
    if entry.is_enforced(now) and not is_loopback(requester_ip) and _covers([entry], requester_ip):
        raise Conflict(
            f"{entry.value} covers your own address {requester_ip}: you would be banned. "
            "Send confirm_lockout=true to do it anyway.",
            code=LOCKOUT_RISK,
            client_ip=requester_ip,
            value=entry.value,
        )


def check_allowlist_lockout(conn: Connection, *, requester_ip: str, now: datetime) -> None:
    """Raise lockout_risk when allowlist mode would be in force without covering the requester."""
    if login_allowed(conn, requester_ip, now):
        return
    raise Conflict(
        f"The allowlist would not include your own address {requester_ip}: you could not sign "
        "in again. Send confirm_lockout=true to do it anyway.",
        code=LOCKOUT_RISK,
        client_ip=requester_ip,
    )


def require_login_allowed(
    engine: Engine, ledger: AuditLedger, actor: Actor, username: str, now: datetime
) -> None:
    """Refuse a sign-in attempt from outside the allowlist: audit it, then raise 403.

    Call before checking the password, so an address outside the allowlist learns nothing about
    accounts.
    """
    with engine.connect() as conn:
        allowed = login_allowed(conn, actor.client_ip or "", now)
    if allowed:
        return
    ledger.record_now(
        engine,
        actor,
        LOGIN_FAILURE,
        target=username or None,
        details={"username": username, "reason": LOGIN_NOT_ALLOWED},
    )
    raise Forbidden(
        "Sign-in is limited to allowlisted addresses, and yours is not one of them.",
        code=LOGIN_NOT_ALLOWED,
    )
