"""The global ban gate: a blocklisted client gets 403 ``banned`` on every route.

``BanGate`` runs right after the request context (which decided ``req.context.client_ip`` by
the one-hop proxy rule) and before sessions, routing and authorisation, so public routes and
unknown paths are covered too. Loopback clients (127.0.0.0/8, ::1) and ``/static/`` files are
always let through. Only the blocklist is consulted: allowlist entries never turn the gate into
deny-all (they limit sign-in; see ``service.require_login_allowed``).

``BanCache`` holds the in-memory table the gate asks. It follows the ``bans`` generation
(re-checked at most once a second, so no database query per request), prunes entries locally
as their expiry passes, and keeps the last good table when the database cannot be reached.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from alertstation.db.generations import NO_RETRY, GenerationCache
from alertstation.db.types import as_utc, epoch_seconds, utcnow
from alertstation.errors import Forbidden
from alertstation.security.bans.entries import IpFilter
from alertstation.security.bans.service import enforced_filters, is_loopback
from alertstation.security.bans.tables import BANS_GENERATION, BLOCKLIST
from alertstation.security.bantable import BanTable

if TYPE_CHECKING:
    import falcon

log = logging.getLogger("alertstation.security")

STATIC_PREFIX = "/static/"
BANNED = "banned"


@dataclass(frozen=True)
class BanSnapshot:
    """The enforced blocklist at one moment, and when the next of its entries expires."""

    table: BanTable[IpFilter]
    next_expiry: datetime | None

    @classmethod
    def of(cls, entries: list[IpFilter], now: datetime) -> BanSnapshot:
        """Build a snapshot of the entries still enforced at ``now``."""
        kept = [entry for entry in entries if entry.is_enforced(now)]
        expiries = [as_utc(entry.expires_at) for entry in kept if entry.expires_at is not None]
        return cls(BanTable(kept), min(expiries) if expiries else None)  # type: ignore[type-var]

    def pruned(self, now: datetime) -> BanSnapshot:
        """Return this snapshot without the entries that have expired by ``now``."""
        return BanSnapshot.of(list(self.table.entries), now)


class BanCache:
    """Answer "is this address banned?" from memory; follows the ``bans`` generation."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], datetime] = utcnow,
        check_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._monotonic = monotonic
        self._check_interval = check_interval
        self._cache: GenerationCache[BanSnapshot] = GenerationCache(
            engine, BANS_GENERATION, self._build, check_interval=check_interval, clock=monotonic
        )
        self._lock = threading.Lock()
        self._base: BanSnapshot | None = None
        self._view: BanSnapshot | None = None
        # The view a request may use without the lock: (base, view, when the view's next entry
        # expires in seconds since the epoch or None), replaced whole under the lock.
        self._ready: tuple[BanSnapshot, BanSnapshot, float | None] | None = None
        self._now_seconds = epoch_seconds(clock)
        self._retry_at = NO_RETRY  # while the database is down: when to try it again (monotonic)
        self._listeners: list[Callable[[], None]] = []

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each ban list change made in this process.

        The host firewall mirror listens here: ``app.build_station`` wires it, so the ban list
        never imports the packages that follow it.
        """
        self._listeners.append(listener)

    def changed(self) -> None:
        """The ban list changed in this process: rebuild now, then tell every listener."""
        self.clear()
        for listener in self._listeners:
            listener()

    def _build(self, conn: Connection) -> BanSnapshot:
        return BanSnapshot.of(enforced_filters(conn, BLOCKLIST, self._clock()), self._clock())

    @property
    def generation(self) -> int | None:
        """Return the generation the table was built from, None before the first build."""
        return self._cache.generation

    def clear(self) -> None:
        """Rebuild on the next check (call after changing the table in this process)."""
        self._cache.clear()
        with self._lock:
            self._retry_at = NO_RETRY

    def snapshot(self) -> BanSnapshot | None:
        """Return the current snapshot; the last good one (or None) while the database is down."""
        base = self._fetch()
        ready = self._ready
        if ready is not None and ready[0] is base:  # the usual request: no lock, no datetime
            expiry = ready[2]
            if expiry is None or self._now_seconds() < expiry:
                return ready[1]
        with self._lock:
            if base is not None and base is not self._base:
                self._base, self._view = base, base
            view = self._view
            if view is not None and view.next_expiry is not None:
                now = self._clock()
                if as_utc(now) >= view.next_expiry:  # type: ignore[operator]
                    view = self._view = view.pruned(now)
            if view is not None and self._base is not None:
                expiry = view.next_expiry
                self._ready = (self._base, view, expiry.timestamp() if expiry else None)
            return view

    def _fetch(self) -> BanSnapshot | None:
        if self._retry_at != NO_RETRY and self._monotonic() < self._retry_at:
            return self._base
        try:
            return self._cache.get()
        except SQLAlchemyError as ex:
            self._retry_at = self._monotonic() + self._check_interval
            log.error(
                "ban list unavailable (%s); %s",
                ex.__class__.__name__,
                "keeping the last table" if self._base is not None else "gate is open",
            )
            return self._base

    def banned_by(self, address: str) -> IpFilter | None:
        """Return the enforced blocklist entry covering ``address``, None when there is none."""
        snapshot = self.snapshot()
        if snapshot is None:
            return None
        try:  # an empty table answers None at once
            return snapshot.table.lookup(address)
        except ValueError:
            return None  # not an address: nothing covers it

    def is_banned(self, address: str) -> bool:
        """Tell whether an enforced blocklist entry covers ``address``."""
        return self.banned_by(address) is not None


class BanGate:
    """Middleware: answer 403 ``banned`` to a blocklisted client, whatever it asked for."""

    def __init__(self, bans: BanCache) -> None:
        self._bans = bans

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path.startswith(STATIC_PREFIX):
            return
        client_ip = req.context.client_ip
        if is_loopback(client_ip):
            return
        if self._bans.banned_by(client_ip) is not None:
            raise Forbidden("Access from your address is blocked.", code=BANNED)
