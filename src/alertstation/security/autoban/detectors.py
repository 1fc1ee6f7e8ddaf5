"""Automatic bans: detectors that put abusive addresses on the blocklist by themselves.

Five detectors, each banning with its own ``ip_filters.source`` (see ``docs/security-autoban.md``):

- ``login_brute_force``: failed sign-ins per address within a window, counted in the database
  (``security_events`` rows of kind ``login_failure``), so exact across processes;
- ``malicious_request``: scanner paths, traversal and injection probes (``autoban_probes``),
  recorded as ``malicious_request`` events and counted in the database; a probe from a
  signed-in user (a valid session cookie, or an address a live session was started from) is
  not counted, so a page that makes the browser fetch ``/.env`` cannot lock the office out;
- ``flood``: requests per address within a short window (``/static/`` not counted);
- ``api_abuse``: 401/403/404/405/429 answers to requests under the API paths;
- ``stream_abuse``: requests to the stream and audio paths.

The last three count in memory (``autoban_counter``), and every process reports each quarter of
the threshold an address reaches within a window as one event row, so an address spreading its
requests over several web processes is still caught. ``AutoBanMiddleware`` runs right after the
ban gate; on the usual request it does a few dictionary operations and no database query.

A trip bans through ``ban_address`` (idempotent, loopback and allowlisted addresses exempt),
writes an ``auto_ban`` event and a ``security.auto_ban`` audit row in the same transaction, then
runs the ban list's after-change step (this process's gate table, the host firewall mirror). The
request that tripped it is answered 403 ``banned``, as the gate answers the next one.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.db.types import epoch_seconds
from alertstation.errors import Forbidden
from alertstation.security.autoban import service as svc
from alertstation.security.autoban.counter import DEFAULT_CAPACITY, RateCounter
from alertstation.security.autoban.probes import probe_of
from alertstation.security.autoban.service import LOGIN_FAILURE, Outcome, Trip
from alertstation.security.autoban.settings import (
    API_ABUSE,
    FLOOD,
    LOGIN_BRUTE_FORCE,
    MALICIOUS_REQUEST,
    STREAM_ABUSE,
    AutobanSettings,
    Rule,
    load_settings,
    path_pattern,
)
from alertstation.security.bans.gate import BANNED, STATIC_PREFIX
from alertstation.security.bans.removal import after_change
from alertstation.security.bans.service import is_loopback

if TYPE_CHECKING:
    import falcon

    from alertstation.context import Station

log = logging.getLogger("alertstation.security.autoban.detectors")

BLOCKED = "Access from your address is blocked."
SYSTEM_ACTOR = "autoban"
API_ERROR_STATUSES = frozenset({401, 403, 404, 405, 429})
SHARE_PARTS = 4  # each process reports every quarter of the threshold it sees
MIN_BATCH = 5  # below a threshold of 20 each process counts alone
USERNAME_MAX = 64


def _actor(req: falcon.Request) -> Actor:
    """Return the audit actor of a ban: the station, on behalf of the offending request."""
    seen = Actor.from_request(req)
    return Actor(
        user_id=None, username=SYSTEM_ACTOR, client_ip=seen.client_ip, user_agent=seen.user_agent
    )


def _where(req: falcon.Request) -> dict[str, Any]:
    return {
        "method": req.method,
        "path": req.relative_uri,
        "user_agent": req.get_header("User-Agent"),
    }


def apply_trip(station: Station, trip: Trip, req: falcon.Request) -> Outcome:
    """Ban the address of a trip: entry, ``auto_ban`` event and audit row, then after-change."""
    if station.bans.is_banned(trip.address):
        return Outcome.ALREADY_BANNED
    now = station.clock()
    with begin_write(station.engine) as conn:
        outcome, entry, reactivated = svc.ban_address(conn, trip, now)
        if entry is not None:
            svc.record_event(
                conn,
                address=entry.value,
                kind=svc.AUTO_BAN,
                now=now,
                detail=trip.description(),
                **_where(req),
            )
            station.ledger.record(
                conn,
                _actor(req),
                svc.AUDIT_ACTION,
                target=entry.value,
                details=trip.details(entry, reactivated),
            )
    if outcome is Outcome.BANNED:
        log.warning("automatic ban of %s: %s", trip.address, trip.description())
        after_change(station)
    return outcome


# --- login brute force ----------------------------------------------------------------------


def login_failed(station: Station, req: falcon.Request, username: str) -> None:
    """Record a failed sign-in; ban the address (403 ``banned``) when it reached the threshold.

    Called by the sign-in resource right after its ``login failure`` audit row. The event is
    recorded even when the detector is off (the Security Center lists failed sign-ins); loopback
    and allowlisted addresses are never banned. A database failure is logged, not raised.
    """
    address = req.context.client_ip
    now = station.clock()
    try:
        with begin_write(station.engine) as conn:
            svc.record_event(
                conn,
                address=address,
                kind=LOGIN_FAILURE,
                now=now,
                detail=username[:USERNAME_MAX] or None,
                **_where(req),
            )
            rule = load_settings(conn).rule(LOGIN_BRUTE_FORCE)
            if not rule.enabled or is_loopback(address):
                return
            since = now - timedelta(seconds=rule.window_seconds)
            count = svc.count_events(conn, address, LOGIN_FAILURE, since)
        if count < rule.threshold:
            return
        trip = Trip(address, rule, count, f"failed sign-in as {username[:USERNAME_MAX]!r}")
        outcome = apply_trip(station, trip, req)
    except SQLAlchemyError as ex:
        log.error("could not record a failed sign-in from %s: %s", address, type(ex).__name__)
        return
    if outcome is not Outcome.EXEMPT:
        raise Forbidden(BLOCKED, code=BANNED)


# --- the middleware -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rate:
    """One in-memory rate detector: its rule, counter, event kind and watched paths."""

    rule: Rule
    counter: RateCounter
    paths: re.Pattern[str] | None = None

    @classmethod
    def of(cls, rule: Rule, capacity: int, watch_paths: bool = False) -> _Rate | None:
        if not rule.enabled:
            return None
        paths = path_pattern(rule.paths) if watch_paths else None
        if watch_paths and paths is None:
            return None  # no paths to watch: nothing to do
        batch = -(-rule.threshold // SHARE_PARTS)
        counter = RateCounter(
            rule.window_seconds, batch=batch if batch >= MIN_BATCH else 0, capacity=capacity
        )
        return cls(rule, counter, paths)

    def matches(self, path: str) -> bool:
        return self.paths is not None and self.paths.match(path) is not None


@dataclass(frozen=True)
class _Watch:
    """The detectors built from one version of the settings."""

    settings: AutobanSettings
    malicious: Rule | None
    flood: _Rate | None
    api: _Rate | None
    stream: _Rate | None

    @classmethod
    def of(cls, settings: AutobanSettings, capacity: int) -> _Watch:
        malicious = settings.rule(MALICIOUS_REQUEST)
        return cls(
            settings,
            malicious if malicious.enabled else None,
            _Rate.of(settings.rule(FLOOD), capacity),
            _Rate.of(settings.rule(API_ABUSE), capacity, watch_paths=True),
            _Rate.of(settings.rule(STREAM_ABUSE), capacity, watch_paths=True),
        )

    def sizes(self) -> dict[str, int]:
        """Return how many addresses each in-memory detector tracks."""
        rates = {FLOOD: self.flood, API_ABUSE: self.api, STREAM_ABUSE: self.stream}
        return {name: len(rate.counter) for name, rate in rates.items() if rate is not None}


#: Tell whether a request (from the given client address) comes from a signed-in user.
SignedIn = Callable[["Station", "falcon.Request", str], bool]


def _nobody_signed_in(station: Station, req: falcon.Request, address: str) -> bool:
    return False


class AutoBanMiddleware:
    """Watch every request for abuse and ban the sender; runs right after the ban gate.

    ``process_request`` checks for probes and counts floods and stream requests;
    ``process_response`` counts API error answers. Loopback clients are never looked at.
    ``capacity`` bounds the addresses each in-memory detector tracks.
    """

    def __init__(
        self,
        station: Station,
        *,
        capacity: int = DEFAULT_CAPACITY,
        signed_in: SignedIn | None = None,
    ) -> None:
        self._station = station
        # The auth package answers "is this a signed-in user?" (alertstation.auth.presence); the
        # app hands it in, since auth sits beside this package and imports it.
        self._is_signed_in: SignedIn = signed_in or _nobody_signed_in
        self._settings = station.autoban_settings
        self._capacity = capacity
        self._lock = threading.Lock()
        self._current: _Watch | None = None
        self._now = epoch_seconds(station.clock)

    def watch(self) -> _Watch:
        """Return the detectors for the current settings (rebuilt when they change)."""
        settings = self._settings.get()
        current = self._current
        if current is not None and current.settings is settings:
            return current
        with self._lock:
            if self._current is None or self._current.settings is not settings:
                self._current = _Watch.of(settings, self._capacity)
            return self._current

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        address = req.context.client_ip
        if is_loopback(address):
            return
        watch = self.watch()
        req.context.autoban = watch
        path = req.path
        if watch.malicious is not None:
            # The header as req.get_header("User-Agent") reads it, straight from the environ.
            label = probe_of(path, req.query_string, req.env.get("HTTP_USER_AGENT"))
            if label is not None:
                self._probe(req, watch.malicious, address, label)
        if watch.flood is not None and not path.startswith(STATIC_PREFIX):
            self._count(req, watch.flood, address)
        if watch.stream is not None and watch.stream.matches(path):
            self._count(req, watch.stream, address)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        watch: _Watch | None = getattr(req.context, "autoban", None)
        if watch is None or watch.api is None or resp.status_code not in API_ERROR_STATUSES:
            return
        if watch.api.matches(req.path):
            try:
                self._count(req, watch.api, req.context.client_ip)
            except Forbidden:
                resp.text = resp.data = resp.stream = None  # the error page replaces the answer
                raise

    def _count(self, req: falcon.Request, rate: _Rate, address: str) -> None:
        now = self._now()
        count, batch_started = rate.counter.hit(address, now)
        if batch_started is not None:
            count = max(count, self._report(req, rate, address, batch_started, now))
        if count >= rate.rule.threshold:
            rate.counter.forget(address)
            self._trip(req, Trip(address, rate.rule, count, f"{req.method} {req.path}"))

    def _report(
        self, req: falcon.Request, rate: _Rate, address: str, started: float, now: float
    ) -> int:
        """Write one rate report; return what every process reported within the window."""
        kind = rate.rule.source
        try:
            with begin_write(self._station.engine) as conn:
                svc.record_event(
                    conn,
                    address=address,
                    kind=kind,
                    now=svc.epoch_time(started),
                    detail=svc.batch_detail(rate.counter.batch),
                    **_where(req),
                )
                since = svc.epoch_time(now - rate.rule.window_seconds)
                return svc.reported_requests(conn, address, kind, since)
        except SQLAlchemyError as ex:
            log.error("could not report %s from %s: %s", kind, address, type(ex).__name__)
            return 0

    def _signed_in(self, req: falcon.Request, address: str) -> bool:
        """Tell whether a probe comes from a signed-in user (asked only when a probe shows)."""
        return self._is_signed_in(self._station, req, address)

    def _probe(self, req: falcon.Request, rule: Rule, address: str, label: str) -> None:
        now = self._station.clock()
        try:
            if self._signed_in(req, address):
                log.info("probe from signed-in %s not counted: %s", address, label)
                return
            with begin_write(self._station.engine) as conn:
                svc.record_event(
                    conn,
                    address=address,
                    kind=MALICIOUS_REQUEST,
                    now=now,
                    detail=label,
                    **_where(req),
                )
                since = now - timedelta(seconds=rule.window_seconds)
                count = svc.count_events(conn, address, MALICIOUS_REQUEST, since)
        except SQLAlchemyError as ex:
            log.error("could not record a probe from %s: %s", address, type(ex).__name__)
            return
        if count >= rule.threshold:
            self._trip(req, Trip(address, rule, count, label))

    def _trip(self, req: falcon.Request, trip: Trip) -> None:
        try:
            outcome = apply_trip(self._station, trip, req)
        except SQLAlchemyError as ex:
            log.error("could not ban %s: %s", trip.address, type(ex).__name__)
            return
        if outcome is not Outcome.EXEMPT:
            req.context.autoban = None  # answered here: not counted again on the way out
            raise Forbidden(BLOCKED, code=BANNED)


# --- the worker job -------------------------------------------------------------------------


def autoban_job(station: Station) -> None:
    """Prune security events older than the retention, in batches of their own transaction."""
    now = station.clock()
    with station.engine.connect() as conn:
        retention = load_settings(conn).retention_days
    before = now - timedelta(days=retention)
    total = 0
    while True:
        with begin_write(station.engine) as conn:
            deleted = svc.prune_events(conn, before)
        total += deleted
        if deleted < svc.PRUNE_BATCH:
            break
    if total:
        log.info("pruned %d security events older than %d days", total, retention)
