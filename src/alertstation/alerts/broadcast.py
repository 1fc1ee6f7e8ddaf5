"""Answer "is the station broadcasting?" from an in-memory snapshot of the active alerts.

The snapshot holds, for every alert in state ``active``, its ``expires`` and ``in_area`` flag.
It is rebuilt only when the ``alerts`` generation moves (checked at most once a second by
:class:`alertstation.db.GenerationCache`), so a request costs no query beyond that check. The
count is taken against the clock at answer time, so an alert whose ``expires`` has passed
stops counting even before the expiry sweep marks it expired.

An EAS message queued or on the air also makes the broadcast active: the station hands in its
``airing`` state (``alertstation.eas.airing.queue.AiringState``: a boolean ``active`` and,
optionally, a ``snapshot`` with ``on_air`` and ``now_airing``), which follows the airing queue
in every process. ``on_air`` is true only while an output plays a message; ``now_airing`` says
what (public: its outputs carry only their name and whether they are ok).

While the database cannot be reached the last snapshot keeps answering, marked ``stale`` (the
store is tried again at most once per check interval); with no snapshot yet the outage is raised
and the web tier answers 503 ``database_unavailable``.

The public resource that answers from the snapshot lives here too; the system status API
(``alertstation.system.status``) reads its counts.
"""

from __future__ import annotations

import logging
import math
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Connection, Engine, select

from alertstation import lazy
from alertstation.alerts import lifecycle
from alertstation.alerts.store import GENERATION
from alertstation.alerts.tables import cap_alerts
from alertstation.db import NO_RETRY, GenerationCache
from alertstation.db.engine import is_outage
from alertstation.db.types import epoch_seconds, utcnow
from alertstation.http.jsonbytes import dumps

if TYPE_CHECKING:
    import falcon

log = logging.getLogger("alertstation.alerts")

# Read when the web tier answers; the worker builds the broadcast state without loading Falcon.
falcon_module = lazy.module("falcon")


class Airing(Protocol):
    """Tell whether a message is queued or on the air now."""

    active: bool


def _on_air(airing: Airing | None) -> tuple[bool, dict[str, Any] | None]:
    """Return (on the air, what airs) from an airing state that has a ``snapshot``."""
    snapshot = getattr(airing, "snapshot", None)
    if snapshot is None:
        return False, None
    return bool(snapshot.on_air), snapshot.now_airing


@dataclass(frozen=True)
class ActiveSnapshot:
    """Hold the active alerts' expiry times and area flags, and when they were read.

    Built once per alerts generation, it sorts the expiry times and keeps, for each position in
    that order, how many in-area alerts expire there or later; ``counts`` is then a binary search
    for ``now`` rather than a walk over every alert, and needs no state that could go out of date
    (a clock set back answers as right as one moving on).
    """

    alerts: tuple[tuple[datetime | None, bool], ...]
    built_at: datetime
    _expiries: tuple[datetime, ...] = field(init=False, repr=False, compare=False)
    _in_area_from: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _lasting: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        timed = sorted(
            ((expires, in_area) for expires, in_area in self.alerts if expires is not None),
            key=itemgetter(0),
        )
        in_area_from = [0] * (len(timed) + 1)
        for index in range(len(timed) - 1, -1, -1):
            in_area_from[index] = in_area_from[index + 1] + bool(timed[index][1])
        lasting = [bool(in_area) for expires, in_area in self.alerts if expires is None]
        object.__setattr__(self, "_expiries", tuple(expires for expires, _ in timed))
        object.__setattr__(self, "_in_area_from", tuple(in_area_from))
        object.__setattr__(self, "_lasting", (len(lasting), sum(lasting)))

    def counts(self, now: datetime) -> tuple[int, int]:
        """Return (active alerts, active in-area alerts) not yet past ``expires`` at ``now``."""
        return self.counts_and_span(now)[:2]

    def counts_and_span(self, now: datetime) -> tuple[int, int, float, float]:
        """Return ``counts(now)`` and the span of times, as seconds since the epoch ``[start,
        end)``, over which they hold: from the last expiry at or before ``now`` to the next."""
        expiries = self._expiries
        first_live = bisect_right(expiries, now)  # expiries from here on are after now
        lasting, lasting_in_area = self._lasting
        return (
            lasting + len(expiries) - first_live,
            lasting_in_area + self._in_area_from[first_live],
            expiries[first_live - 1].timestamp() if first_live else -math.inf,
            expiries[first_live].timestamp() if first_live < len(expiries) else math.inf,
        )


def build_snapshot(conn: Connection, now: datetime) -> ActiveSnapshot:
    """Read the expiry time and area flag of every alert in state active, stamped ``now``."""
    a = cap_alerts.c
    rows = conn.execute(select(a.expires, a.in_area).where(a.state == lifecycle.ACTIVE)).all()
    return ActiveSnapshot(tuple((row.expires, bool(row.in_area)) for row in rows), now)


class BroadcastState:
    """Keep the active-alerts snapshot of one engine and answer the broadcast state.

    One instance is made per process (``alertstation.app.build_station``, kept as
    ``station.broadcast``) and shared by the resources that need it; a mutation made through
    this process calls :meth:`clear`.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], datetime] = utcnow,
        airing: Airing | None = None,
        check_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._now_seconds = epoch_seconds(clock)
        self._monotonic = monotonic
        self._check_interval = check_interval
        # The last good (snapshot, generation), replaced whole so readers need no lock; while
        # the store is down it answers until ``_retry_at`` (a monotonic time) has passed.
        self._last: tuple[ActiveSnapshot, int] | None = None
        self._retry_at = NO_RETRY
        self._last_airing = False
        self._last_on_air: tuple[bool, dict[str, Any] | None] = (False, None)
        # The last answer's parts and its JSON: most requests give the same parts again.
        self._json: tuple[_Parts, bytes] | None = None
        # The last counts taken, with their snapshot and the span of times they hold over.
        self._counted: tuple[ActiveSnapshot, float, float, int, int] | None = None
        self._cache: GenerationCache[ActiveSnapshot] = GenerationCache(
            engine,
            GENERATION,
            lambda conn: build_snapshot(conn, self._clock()),
            check_interval=check_interval,
            clock=monotonic,
        )
        self._airing = airing

    def snapshot(self) -> ActiveSnapshot:
        """Return the current snapshot (rebuilt when the alerts generation moved)."""
        return self._cache.get()

    def clear(self) -> None:
        """Drop the snapshot so the next answer reads the store again."""
        self._cache.clear()
        self._retry_at = NO_RETRY

    def counts(self) -> tuple[int, int]:
        """Return (active alerts, active in-area alerts) at the clock's current time."""
        return self.snapshot().counts(self._clock())

    def _current(self) -> tuple[ActiveSnapshot, int | None, bool]:
        """Return (snapshot, its generation, stale); the last good one while the store is down.

        Threads share the state without a lock: each value is replaced whole, and a race can
        at worst try the store once more than needed.
        """
        last = self._last
        if last is not None and self._retry_at != NO_RETRY and self._monotonic() < self._retry_at:
            return last[0], last[1], True
        try:
            snapshot, generation = self._cache.snapshot()
        except Exception as ex:
            if last is None or not is_outage(ex):
                raise
            self._retry_at = self._monotonic() + self._check_interval
            log.warning("broadcast state: database unavailable, serving the last snapshot")
            return last[0], last[1], True
        if last is None or last[0] is not snapshot or last[1] != generation:
            self._last = (snapshot, generation)
        if self._retry_at != NO_RETRY:
            self._retry_at = NO_RETRY
        return snapshot, generation, False

    def _parts(self) -> _Parts:
        """Return what the answer says: (snapshot, generation, active, in area, airing, stale,
        on air, now airing)."""
        snapshot, generation, stale = self._current()
        counted, now = self._counted, self._now_seconds()
        if counted is None or counted[0] is not snapshot or not counted[1] <= now < counted[2]:
            active, in_area, start, end = snapshot.counts_and_span(self._clock())
            counted = self._counted = (snapshot, start, end, active, in_area)
        active, in_area = counted[3], counted[4]
        airing = self._last_airing
        on_air, now_airing = self._last_on_air
        if not stale:
            try:
                airing = bool(self._airing is not None and self._airing.active)
                on_air, now_airing = _on_air(self._airing)
            except Exception as ex:
                if not is_outage(ex):
                    raise
                stale = True
            self._last_airing = airing
            self._last_on_air = (on_air, now_airing)
        return snapshot, generation, active, in_area, airing, stale, on_air, now_airing

    def state(self) -> dict[str, Any]:
        """Return the public broadcast state as JSON-ready data.

        ``stale`` is true when the database cannot be reached and the answer comes from the last
        snapshot read; ``timestamp`` then says when that was.
        """
        return _document(self._parts())

    def state_json(self) -> bytes:
        """Return :meth:`state` as the JSON the API answers, serialised once per new answer."""
        parts = self._parts()
        cached = self._json
        if cached is not None and cached[0] == parts:
            return cached[1]
        body = dumps(_document(parts))
        self._json = (parts, body)
        return body


_Parts = tuple[ActiveSnapshot, int | None, int, int, bool, bool, bool, dict[str, Any] | None]


def _document(parts: _Parts) -> dict[str, Any]:
    """Return the answer's JSON-ready document from its parts."""
    snapshot, generation, active, in_area, airing, stale, on_air, now_airing = parts
    return {
        "active": in_area > 0 or airing,
        "active_alerts": active,
        "in_area_alerts": in_area,
        "airing": airing,
        "on_air": on_air,
        "now_airing": now_airing,
        "generation": generation,
        "timestamp": snapshot.built_at.isoformat(),
        "stale": stale,
    }


class BroadcastStateApi:
    """GET /api/broadcast/state: whether the station broadcasts, from the in-memory snapshot."""

    def __init__(self, broadcast: BroadcastState) -> None:
        self._broadcast = broadcast

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.data = self._broadcast.state_json()
        resp.content_type = falcon_module.MEDIA_JSON
        resp.set_header("Cache-Control", "no-store")
