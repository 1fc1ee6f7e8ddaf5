"""Database work of the automatic bans: security events, counts over a window, the ban itself.

``ban_address`` is idempotent under concurrency: on SQLite the write transaction is serialised
(BEGIN IMMEDIATE); on PostgreSQL an existing row is locked (``FOR UPDATE``) before it is looked
at, and a second insert of the same address fails on the ``(kind, value)`` unique constraint
inside a savepoint and is reported as already banned. So many threads or processes tripping
on one address at once make one ban, one ``auto_ban`` event and one audit row.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, select
from sqlalchemy.exc import IntegrityError

from alertstation.db.generations import bump_generation
from alertstation.db.types import as_utc
from alertstation.security.autoban.settings import Rule
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.entries import IpFilter
from alertstation.security.bans.service import enforced_filters, get_filter, is_loopback
from alertstation.security.bans.tables import (
    ALLOWLIST,
    BANS_GENERATION,
    BLOCKLIST,
    SOURCES,
    ip_filters,
)
from alertstation.security.bantable import BanTable, normalise

AUTO_BAN = "auto_ban"
AUDIT_ACTION = "security.auto_ban"
LOGIN_FAILURE = "login_failure"
PRUNE_BATCH = 5_000
_WIDTHS = {"address": 64, "method": 16, "path": 512, "user_agent": 512}
DETAIL_MAX = 1_000
# What each detector counts, for descriptions: "12 failed sign-ins within 900 s".
COUNTED = {
    "login_brute_force": "failed sign-ins",
    "malicious_request": "malicious requests",
    "flood": "requests",
    "api_abuse": "API error answers",
    "stream_abuse": "stream requests",
}


class Outcome(enum.Enum):
    """What an attempt to ban an address came to."""

    BANNED = "banned"  # a new entry, or an old inactive/expired one switched back on
    ALREADY_BANNED = "already_banned"  # an enforced entry (or a range) already covers it
    EXEMPT = "exempt"  # loopback, not an address, or covered by an enforced allowlist entry


@dataclass(frozen=True)
class Trip:
    """A detector reached its threshold for one address."""

    address: str
    rule: Rule
    count: int
    trigger: str  # what tripped it, e.g. "301 requests" or "scanner path: '/.env'"

    @property
    def reason(self) -> str:
        """Return the entry's reason, ``auto_<source>``."""
        return f"auto_{self.rule.source}"

    def description(self) -> str:
        """Return the entry's description: what tripped which detector."""
        source = self.rule.source
        return (
            f"{SOURCES.get(source, source)}: {self.count} {COUNTED.get(source, 'events')} "
            f"within {self.rule.window_seconds} s (threshold {self.rule.threshold}); "
            f"last: {self.trigger}"
        )[:DETAIL_MAX]

    def expires_at(self, now: datetime) -> datetime | None:
        """Return when the ban ends; None for a permanent ban (``ban_seconds`` 0)."""
        if not self.rule.ban_seconds:
            return None
        return as_utc(now) + timedelta(seconds=self.rule.ban_seconds)  # type: ignore[operator]

    def details(self, entry: IpFilter, reactivated: bool) -> dict[str, Any]:
        """Return the audit row's details."""
        return {
            "id": entry.id,
            "value": entry.value,
            "source": self.rule.source,
            "reason": self.reason,
            "count": self.count,
            "threshold": self.rule.threshold,
            "window_seconds": self.rule.window_seconds,
            "ban_seconds": self.rule.ban_seconds,
            "expires_at": entry.expires_at.isoformat() if entry.expires_at else None,
            "trigger": self.trigger,
            "reactivated": reactivated,
        }


# --- security events ------------------------------------------------------------------------


def _clip(value: str | None, width: int) -> str | None:
    """Cut ``value`` to its column; a NUL (which PostgreSQL text cannot hold) is written
    ``%00``, as it came in a URL, so a probe is stored alike on both backends."""
    return value.replace("\x00", "%00")[:width] if value else None


def record_event(
    conn: Connection,
    *,
    address: str,
    kind: str,
    now: datetime,
    method: str | None = None,
    path: str | None = None,
    user_agent: str | None = None,
    detail: str | None = None,
) -> None:
    """Append one ``security_events`` row (long texts are cut to the column widths)."""
    conn.execute(
        security_events.insert().values(
            occurred_at=as_utc(now),
            address=_clip(address, _WIDTHS["address"]) or "",
            kind=kind,
            method=_clip(method, _WIDTHS["method"]),
            path=_clip(path, _WIDTHS["path"]),
            user_agent=_clip(user_agent, _WIDTHS["user_agent"]),
            detail=_clip(detail, DETAIL_MAX),
        )
    )


def count_events(conn: Connection, address: str, kind: str, since: datetime) -> int:
    """Return how many events of ``kind`` from ``address`` occurred after ``since``."""
    query = select(func.count()).where(
        security_events.c.address == address,
        security_events.c.kind == kind,
        security_events.c.occurred_at > as_utc(since),
    )
    return int(conn.execute(query).scalar_one())


def batch_detail(size: int) -> str:
    """Return the detail of a rate report: ``"75 requests"``."""
    return f"{size} requests"


def reported_requests(conn: Connection, address: str, kind: str, since: datetime) -> int:
    """Add up the rate reports of every process for ``address`` after ``since``."""
    query = select(security_events.c.detail).where(
        security_events.c.address == address,
        security_events.c.kind == kind,
        security_events.c.occurred_at > as_utc(since),
    )
    total = 0
    for (detail,) in conn.execute(query):
        head = (detail or "").split(" ", 1)[0]
        total += int(head) if head.isdigit() else 0
    return total


def prune_events(conn: Connection, before: datetime, limit: int = PRUNE_BATCH) -> int:
    """Delete up to ``limit`` of the oldest events older than ``before``; return how many."""
    oldest = (
        select(security_events.c.id)
        .where(security_events.c.occurred_at < as_utc(before))
        .order_by(security_events.c.id)
        .limit(limit)
    )
    ids = list(conn.execute(oldest).scalars())
    if ids:
        conn.execute(delete(security_events).where(security_events.c.id.in_(ids)))
    return len(ids)


def epoch_time(seconds: float) -> datetime:
    """Return a UTC datetime for seconds since the epoch."""
    return datetime.fromtimestamp(seconds, UTC)


# --- banning --------------------------------------------------------------------------------


def is_allowlisted(conn: Connection, address: str, now: datetime) -> bool:
    """Tell whether an enforced allowlist entry covers ``address``."""
    entries = enforced_filters(conn, ALLOWLIST, now)
    return bool(entries) and BanTable(entries).contains(address)


def ban_address(
    conn: Connection, trip: Trip, now: datetime
) -> tuple[Outcome, IpFilter | None, bool]:
    """Put ``trip.address`` on the blocklist inside the caller's write transaction.

    Return the outcome, the entry when it was banned now, and whether an old entry was switched
    back on (rather than added). Loopback and allowlisted addresses are never banned; an
    enforced entry for the address means it is already banned. Bumps the ``bans`` generation.
    """
    try:
        value = normalise(trip.address)
    except ValueError:
        return Outcome.EXEMPT, None, False
    if "/" in value or is_loopback(value) or is_allowlisted(conn, value, now):
        return Outcome.EXEMPT, None, False
    fields = {
        "active": True,
        "expires_at": trip.expires_at(now),
        "created_at": as_utc(now),
        "reason": trip.reason,
        "description": trip.description(),
        "source": trip.rule.source,
    }
    existing = conn.execute(
        select(ip_filters.c.id, ip_filters.c.active, ip_filters.c.expires_at)
        .where(ip_filters.c.kind == BLOCKLIST, ip_filters.c.value == value)
        .with_for_update()
    ).first()
    if existing is not None:
        expires = as_utc(existing.expires_at)
        if existing.active and (expires is None or expires > as_utc(now)):  # type: ignore[operator]
            return Outcome.ALREADY_BANNED, None, False
        conn.execute(ip_filters.update().where(ip_filters.c.id == existing.id).values(**fields))
        entry_id, reactivated = int(existing.id), True
    else:
        try:
            with conn.begin_nested():
                inserted = conn.execute(
                    ip_filters.insert().values(kind=BLOCKLIST, value=value, **fields)
                )
        except IntegrityError:  # another transaction banned it a moment ago
            return Outcome.ALREADY_BANNED, None, False
        entry_id, reactivated = int(inserted.inserted_primary_key[0]), False
    bump_generation(conn, BANS_GENERATION)
    return Outcome.BANNED, get_filter(conn, entry_id), reactivated
