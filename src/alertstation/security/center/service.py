"""Security Center queries: the overview metrics, the traffic of security events, failed sign-ins.

Windows are half-open on the left: ``(now - days, now]``, so a row exactly 24 hours old is no
longer "in the last 24 hours" and a row stamped after ``now`` (another process's clock ahead of
this one) is not counted yet. ``now`` is the station's clock.

Sources (see docs/security-center.md):

- failed sign-ins come from the audit ledger (``login failure`` rows): every refused sign-in
  writes one, including those refused by login allowlist mode, whether or not automatic bans
  are on, and the ledger is never pruned;
- the Traffic tab reads ``security_events`` (what the abuse detectors saw);
- ban counts come from ``ip_filters``; the host firewall's mirrored and pending counts from a
  probe of the dedicated jail that ``JailProbeCache`` remembers, so the overview does not run
  ``fail2ban-client`` on every request.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, distinct, func, select

from alertstation.audit.ledger import LOGIN_FAILURE
from alertstation.audit.tables import audit_logs
from alertstation.db.generations import read_generation
from alertstation.db.types import as_utc
from alertstation.security.autoban.settings import load_settings as load_autoban_settings
from alertstation.security.autoban.tables import EVENT_KINDS, security_events
from alertstation.security.bans import service
from alertstation.security.bans.entries import IpFilter
from alertstation.security.bans.tables import (
    ALLOWLIST,
    BANS_GENERATION,
    BLOCKLIST,
    SSH_BRUTE_FORCE,
    ip_filters,
)
from alertstation.security.bantable import BanTable
from alertstation.security.hostban.fail2ban import DaemonError, is_mirrorable
from alertstation.security.hostban.service import HostbanSettings

log = logging.getLogger("alertstation.security.center")

WINDOW_DAYS = (1, 7)
RECENT_LIMIT = 100
TOP_LIMIT = 20
USERNAMES_SHOWN = 5
PROBE_TTL_SECONDS = 60.0
PROBE_TIMEOUT_SECONDS = 5.0
# Where the automatic-ban settings reader lives (a sibling feature; the overview tolerates its
# absence).


@dataclass(frozen=True)
class Window:
    """The period ``(start, end]`` a report covers."""

    start: datetime
    end: datetime
    days: int

    @classmethod
    def ending(cls, now: datetime, days: int = 1) -> Window:
        """Return the window of ``days`` days (1 or 7) ending at ``now``; ValueError otherwise."""
        if days not in WINDOW_DAYS:
            raise ValueError(f"days must be one of {', '.join(map(str, WINDOW_DAYS))}")
        end: datetime = as_utc(now)  # type: ignore[assignment]
        return cls(end - timedelta(days=days), end, days)

    def covers(self, column: Any) -> ColumnElement[bool]:
        """Return the SQL condition ``start < column <= end``."""
        return (column > self.start) & (column <= self.end)

    def hours(self) -> list[datetime]:
        """Return the start of every clock hour the window touches, oldest first."""
        first = self.start.replace(minute=0, second=0, microsecond=0)
        last = self.end.replace(minute=0, second=0, microsecond=0)
        count = int((last - first) / timedelta(hours=1)) + 1
        return [first + timedelta(hours=index) for index in range(count)]


# --- ban list -------------------------------------------------------------------------------


def ban_lookup(conn: Connection, now: datetime) -> Callable[[str], IpFilter | None]:
    """Return a function naming the enforced blocklist entry covering an address (or None)."""
    table = BanTable(service.enforced_filters(conn, BLOCKLIST, now))

    def lookup(address: str) -> IpFilter | None:
        if not len(table):
            return None
        try:
            return table.lookup(address)
        except ValueError:
            return None  # not an address (the column is free text in old rows)

    return lookup


def ban_counts(
    conn: Connection, now: datetime, window: Window, blocklist: list[IpFilter] | None = None
) -> dict[str, int]:
    """Count active bans, bans added in ``window``, SSH bans and allowlist entries in force.

    ``ips_banned_24h`` counts distinct blocklist values created in the window, whatever their
    state now (removed entries are gone and not counted). ``ssh_attacks_blocked`` counts every
    ``ssh_brute_force`` blocklist entry on the list, in force or not; ``ssh_bans_active`` only
    those in force. ``blocklist`` may pass the enforced blocklist when the caller has it.
    """
    if blocklist is None:
        blocklist = service.enforced_filters(conn, BLOCKLIST, now)
    allowlist = service.enforced_filters(conn, ALLOWLIST, now)
    created = conn.execute(
        select(func.count(distinct(ip_filters.c.value))).where(
            ip_filters.c.kind == BLOCKLIST, window.covers(ip_filters.c.created_at)
        )
    ).scalar_one()
    ssh_total = conn.execute(
        select(func.count()).where(
            ip_filters.c.kind == BLOCKLIST, ip_filters.c.source == SSH_BRUTE_FORCE
        )
    ).scalar_one()
    return {
        "active_bans": len(blocklist),
        "ips_banned_24h": int(created),
        "ssh_attacks_blocked": int(ssh_total),
        "ssh_bans_active": sum(1 for entry in blocklist if entry.source == SSH_BRUTE_FORCE),
        "allowlist_entries": len(allowlist),
    }


def mirrorable_values(blocklist: list[IpFilter]) -> set[str]:
    """Return the enforced blocklist values the host firewall should hold (bridge rule 2)."""
    return {entry.value for entry in blocklist if is_mirrorable(entry.value)}


# --- failed sign-ins ------------------------------------------------------------------------


def _failures(window: Window) -> ColumnElement[bool]:
    return (audit_logs.c.action == LOGIN_FAILURE) & window.covers(audit_logs.c.created_at)


def count_failed_logins(conn: Connection, window: Window) -> int:
    """Count the ``login failure`` audit rows in ``window``."""
    return int(conn.execute(select(func.count()).where(_failures(window))).scalar_one())


def _details(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def recent_failed_logins(
    conn: Connection, window: Window, limit: int = RECENT_LIMIT
) -> list[dict[str, Any]]:
    """Return the newest failed sign-ins: time, address, attempted username, reason, agent."""
    query = (
        select(
            audit_logs.c.id,
            audit_logs.c.created_at,
            audit_logs.c.client_ip,
            audit_logs.c.user_agent,
            audit_logs.c.target,
            audit_logs.c.details,
        )
        .where(_failures(window))
        .order_by(audit_logs.c.created_at.desc(), audit_logs.c.id.desc())
        .limit(limit)
    )
    rows = []
    for row in conn.execute(query):
        details = _details(row.details)
        username = details.get("username")
        rows.append(
            {
                "id": row.id,
                "at": as_utc(row.created_at),
                "address": row.client_ip,
                "username": username if isinstance(username, str) else row.target,
                "reason": details.get("reason") or "invalid_credentials",
                "user_agent": row.user_agent,
            }
        )
    return rows


def failed_logins_by_address(
    conn: Connection, window: Window, limit: int = TOP_LIMIT
) -> list[dict[str, Any]]:
    """Return the addresses with the most failed sign-ins, with the usernames they tried."""
    count = func.count().label("failures")
    query = (
        select(audit_logs.c.client_ip, count, func.max(audit_logs.c.created_at).label("last"))
        .where(_failures(window))
        .group_by(audit_logs.c.client_ip)
        .order_by(count.desc(), audit_logs.c.client_ip)
        .limit(limit)
    )
    top = [
        {
            "address": row.client_ip,
            "failures": int(row.failures),
            "last_attempt": as_utc(row.last),
            "usernames": [],
        }
        for row in conn.execute(query)
    ]
    addresses = [item["address"] for item in top if item["address"] is not None]
    if addresses:
        tried = (
            select(audit_logs.c.client_ip, audit_logs.c.target, func.count().label("n"))
            .where(_failures(window), audit_logs.c.client_ip.in_(addresses))
            .group_by(audit_logs.c.client_ip, audit_logs.c.target)
        )
        names: dict[str, Counter[str]] = {}
        for row in conn.execute(tried):
            if row.target:
                names.setdefault(row.client_ip, Counter())[row.target] = int(row.n)
        for item in top:
            counter = names.get(item["address"], Counter())
            ranked = sorted(counter.items(), key=lambda pair: (-pair[1], pair[0]))
            item["usernames"] = [name for name, _ in ranked[:USERNAMES_SHOWN]]
            item["username_count"] = len(counter)
    return top


def count_failed_login_addresses(conn: Connection, window: Window) -> int:
    """Count the distinct addresses with failed sign-ins in ``window``."""
    query = select(func.count(distinct(audit_logs.c.client_ip))).where(_failures(window))
    return int(conn.execute(query).scalar_one())


# --- security events ------------------------------------------------------------------------


def _hour_key(conn: Connection) -> ColumnElement[str]:
    """Return an SQL expression giving the event's UTC hour as ``YYYY-MM-DD HH``."""
    column = security_events.c.occurred_at
    if conn.dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD HH24")
    # SQLite keeps the UTC time as ISO text ("YYYY-MM-DD HH:MM:SS.ffffff").
    return func.substr(column, 1, 13)


def events_per_hour(conn: Connection, window: Window) -> list[dict[str, Any]]:
    """Return one bucket per hour of ``window`` with its total and its count per kind."""
    hour = _hour_key(conn).label("hour")
    query = (
        select(hour, security_events.c.kind, func.count().label("n"))
        .where(window.covers(security_events.c.occurred_at))
        .group_by(hour, security_events.c.kind)
    )
    counts: dict[str, dict[str, int]] = {}
    for row in conn.execute(query):
        counts.setdefault(row.hour, {})[row.kind] = int(row.n)
    buckets = []
    for start in window.hours():
        kinds = counts.get(start.strftime("%Y-%m-%d %H"), {})
        buckets.append({"hour": start, "total": sum(kinds.values()), "kinds": kinds})
    return buckets


def event_totals(conn: Connection, window: Window, hours: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the number of events, of distinct addresses and of events per kind.

    The per-kind counts are summed from ``hours`` (``events_per_hour`` of the same window), which
    saves a second pass over the window's events.
    """
    per_kind = dict.fromkeys(EVENT_KINDS, 0)
    for bucket in hours:
        for kind, number in bucket["kinds"].items():
            per_kind[kind] = per_kind.get(kind, 0) + number
    addresses = conn.execute(
        select(func.count(distinct(security_events.c.address))).where(
            window.covers(security_events.c.occurred_at)
        )
    ).scalar_one()
    return {"total": sum(per_kind.values()), "addresses": int(addresses), "kinds": per_kind}


def top_event_addresses(
    conn: Connection, window: Window, limit: int = TOP_LIMIT
) -> list[dict[str, Any]]:
    """Return the addresses with the most events, each with its count per kind and last event."""
    covered = window.covers(security_events.c.occurred_at)
    count = func.count().label("events")
    query = (
        select(
            security_events.c.address,
            count,
            func.max(security_events.c.occurred_at).label("last"),
        )
        .where(covered)
        .group_by(security_events.c.address)
        .order_by(count.desc(), security_events.c.address)
        .limit(limit)
    )
    top = [
        {"address": row.address, "events": int(row.events), "last_seen": as_utc(row.last)}
        for row in conn.execute(query)
    ]
    kinds: dict[str, dict[str, int]] = {}
    if top:
        per_kind = (
            select(security_events.c.address, security_events.c.kind, func.count().label("n"))
            .where(covered, security_events.c.address.in_([item["address"] for item in top]))
            .group_by(security_events.c.address, security_events.c.kind)
        )
        for row in conn.execute(per_kind):
            kinds.setdefault(row.address, {})[row.kind] = int(row.n)
    for item in top:
        item["kinds"] = kinds.get(item["address"], {})
    return top


def recent_events(
    conn: Connection, window: Window, limit: int = RECENT_LIMIT
) -> list[dict[str, Any]]:
    """Return the newest events of ``window``."""
    query = (
        select(security_events)
        .where(window.covers(security_events.c.occurred_at))
        .order_by(security_events.c.occurred_at.desc(), security_events.c.id.desc())
        .limit(limit)
    )
    return [
        {
            "id": row.id,
            "occurred_at": as_utc(row.occurred_at),
            "address": row.address,
            "kind": row.kind,
            "method": row.method,
            "path": row.path,
            "user_agent": row.user_agent,
            "detail": row.detail,
        }
        for row in conn.execute(query)
    ]


# --- automatic bans -------------------------------------------------------------------------


def automatic_bans_state(conn: Connection) -> dict[str, Any]:
    """Describe the automatic-ban settings: each detector's switch, ``enabled`` when any is on.

    The overview must render even when that table cannot be read: ``enabled`` is then null and
    the failure is logged.
    """
    try:
        settings = load_autoban_settings(conn)
    except Exception:
        log.exception("reading the automatic-ban settings failed")
        return {"available": True, "enabled": None, "detectors": {}}
    detectors = {source: rule.enabled for source, rule in settings.rules.items()}
    return {"available": True, "enabled": any(detectors.values()), "detectors": detectors}


# --- host firewall --------------------------------------------------------------------------


@dataclass(frozen=True)
class JailProbe:
    """What the dedicated jail held when last asked: its banned addresses or the daemon error."""

    banned: frozenset[str] | None
    error: str | None
    checked_at: datetime
    key: tuple[Any, ...]
    taken: float


class JailProbeCache:
    """Ask the daemon for the dedicated jail's banned list at most once a minute per process.

    A probe is reused while it is younger than ``ttl`` seconds and the ``bans`` generation and
    the daemon settings are unchanged (a ban list change is mirrored at once, so it invalidates
    the probe). One request probes at a time; others meanwhile reuse the last probe.
    """

    def __init__(
        self,
        *,
        ttl: float = PROBE_TTL_SECONDS,
        timeout: float = PROBE_TIMEOUT_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._timeout = timeout
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._last: JailProbe | None = None

    def get(self, settings: HostbanSettings, generation: int, now: datetime) -> JailProbe | None:
        """Return a fresh enough probe, probing now when needed; None while another probes."""
        key = (settings.socket_path, settings.config_dir, settings.app_jail, generation)
        last = self._last
        if last is not None and last.key == key and self._monotonic() - last.taken < self._ttl:
            return last
        if not self._lock.acquire(blocking=False):
            return last if last is not None and last.key == key else None
        try:
            daemon = replace(settings.daemon(), timeout=self._timeout)
            try:
                banned: frozenset[str] | None = frozenset(daemon.banned(settings.app_jail))
                error = None
            except (DaemonError, ValueError) as ex:
                banned, error = None, str(ex)
            self._last = JailProbe(banned, error, now, key, self._monotonic())
            return self._last
        finally:
            self._lock.release()

    def clear(self) -> None:
        """Forget the last probe."""
        self._last = None


def host_firewall_state(
    settings: HostbanSettings, desired: set[str], probe: JailProbe | None
) -> dict[str, Any]:
    """Summarise the mirror: toggle, state, mirrorable/mirrored/pending counts, daemon error.

    ``state`` is ``off`` (mirror toggle off: nothing is pending), ``ok`` (the jail holds every
    mirrorable address), ``pending`` (some are missing), ``error`` (the daemon did not answer:
    everything counts as pending, as in the bridge's own reconcile) or ``unknown`` (not probed
    yet). The daemon's error text is in ``error``; callers strip it for non-admins.
    """
    summary: dict[str, Any] = {
        "mirror_enabled": settings.mirror_enabled,
        "ssh_jail_enabled": settings.ssh_jail_enabled,
        "mirrorable": len(desired),
        "mirrored": 0,
        "firewall_pending": 0,
        "checked_at": None,
        "error": None,
    }
    if not settings.mirror_enabled:
        return {**summary, "state": "off"}
    if probe is None:
        return {**summary, "state": "unknown", "mirrored": None, "firewall_pending": None}
    summary["checked_at"] = probe.checked_at
    if probe.banned is None:
        return {**summary, "state": "error", "firewall_pending": len(desired), "error": probe.error}
    pending = len(desired - probe.banned)
    return {
        **summary,
        "state": "pending" if pending else "ok",
        "mirrored": len(desired & probe.banned),
        "firewall_pending": pending,
    }


def bans_generation(conn: Connection) -> int:
    """Return the ``bans`` generation (moves with every ban list change)."""
    return read_generation(conn, BANS_GENERATION)


# --- the overview ---------------------------------------------------------------------------


def gate_state(entries: int | None) -> dict[str, Any]:
    """Describe this process's ban gate from the size of its table (None: no table yet).

    ``enforcing``: the gate holds at least one ban; ``idle``: it is loaded and the blocklist is
    empty; ``open``: no table could be built (the database was unreachable since start), so
    requests pass.
    """
    if entries is None:
        return {"state": "open", "entries": 0}
    return {"state": "enforcing" if entries else "idle", "entries": entries}


def overview(
    conn: Connection,
    now: datetime,
    *,
    gate_entries: int | None,
    hostban: HostbanSettings,
    probes: JailProbeCache,
) -> dict[str, Any]:
    """Return the Enforcement Status card and the Security Metrics of the last 24 hours."""
    window = Window.ending(now, 1)
    blocklist = service.enforced_filters(conn, BLOCKLIST, now)
    counts = ban_counts(conn, now, window, blocklist)
    desired = mirrorable_values(blocklist)
    probe = probes.get(hostban, bans_generation(conn), now) if hostban.mirror_enabled else None
    firewall = host_firewall_state(hostban, desired, probe)
    return {
        "generated_at": window.end,
        "enforcement": {
            "ban_gate": gate_state(gate_entries),
            "active_bans": counts["active_bans"],
            "allowlist_mode": counts["allowlist_entries"] > 0,
            "allowlist_entries": counts["allowlist_entries"],
            "automatic_bans": automatic_bans_state(conn),
            "host_firewall": firewall,
        },
        "metrics": {
            "failed_logins_24h": count_failed_logins(conn, window),
            "ips_banned_24h": counts["ips_banned_24h"],
            "active_bans": counts["active_bans"],
            "ssh_attacks_blocked": counts["ssh_attacks_blocked"],
            "ssh_bans_active": counts["ssh_bans_active"],
            "mirrorable": firewall["mirrorable"],
            "mirrored": firewall["mirrored"],
            "firewall_pending": firewall["firewall_pending"],
        },
    }
