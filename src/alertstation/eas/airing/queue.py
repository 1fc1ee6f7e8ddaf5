"""The airing queue: put archived messages in line, claim the next, record how it aired.

Every message the station airs is first archived, then queued here (``eas_airing_queue``) in
the same transaction (:func:`alertstation.eas.airing.onair.air_message`). The worker's airing loop
claims the oldest queued item, plays it through the outputs and records the result. One message
airs at a time across every process and host: a claim is refused while another item is on the
air, and claims are serialised by bumping the ``eas_airing`` generation first thing in their
write transaction (a row lock on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite).

A queued item whose purge time (from the header, counted from when it was queued) has passed is
failed at claim time instead of aired: an alert that expired while no worker ran is not sent
late. An item left ``airing`` by a worker that stopped is failed by :func:`recover_interrupted`
when the next airing loop starts; it is not aired again on its own.

:class:`AiringState` answers the broadcast state's ``active`` flag (on while any item is
queued or airing) from the ``eas_airing`` generation, so a request costs no query beyond the
generation check it already makes at most once a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

import orjson
from sqlalchemy import Connection, Engine, func, select

from alertstation.db.engine import begin_write
from alertstation.db.generations import GenerationCache, bump_generation
from alertstation.eas.airing.tables import ORIGINS, eas_airing_queue
from alertstation.eas.tables import eas_archive
from alertstation.same import SameHeader, is_national

GENERATION: Final[str] = "eas_airing"
QUEUED: Final[str] = "queued"
AIRING: Final[str] = "airing"
AIRED: Final[str] = "aired"
FAILED: Final[str] = "failed"
ACTIVE_STATES: Final[tuple[str, str]] = (QUEUED, AIRING)
INTERRUPTED: Final[str] = (
    "interrupted: the worker stopped while this message was on the air; "
    "it is not aired again automatically (resend it if it must air)"
)

_q = eas_airing_queue.c
_a = eas_archive.c


@dataclass(frozen=True)
class QueueItem:
    """One queue row with the archived message it plays."""

    id: int
    archive_id: int
    origin: str
    state: str
    enqueued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    outputs: dict[str, Any] | None
    header: str
    wav_path: str
    sample_rate: int
    duration: float
    aired_by: str | None

    def as_dict(self) -> dict[str, Any]:
        """Return the item as JSON-ready data."""
        return {
            "id": self.id,
            "message_id": self.archive_id,
            "origin": self.origin,
            "state": self.state,
            "header": self.header,
            "duration": self.duration,
            "aired_by": self.aired_by,
            "enqueued_at": self.enqueued_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "error": self.error,
            "outputs": self.outputs,
        }


def _items_query() -> Any:
    return select(
        eas_airing_queue, _a.header, _a.wav_path, _a.sample_rate, _a.duration, _a.aired_by
    ).join(eas_archive, _a.id == _q.archive_id)


def _item(row: Any) -> QueueItem:
    return QueueItem(
        id=row.id,
        archive_id=row.archive_id,
        origin=row.origin,
        state=row.state,
        enqueued_at=row.enqueued_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        error=row.error,
        outputs=orjson.loads(row.outputs) if row.outputs else None,
        header=row.header,
        wav_path=row.wav_path,
        sample_rate=row.sample_rate,
        duration=row.duration,
        aired_by=row.aired_by,
    )


def enqueue(conn: Connection, archive_id: int, origin: str, now: datetime) -> int:
    """Queue an archived message inside the caller's write transaction; return the item id."""
    if origin not in ORIGINS:
        raise ValueError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
    result = conn.execute(
        eas_airing_queue.insert().values(
            archive_id=archive_id, origin=origin, state=QUEUED, enqueued_at=now
        )
    )
    bump_generation(conn, GENERATION)
    return int(result.inserted_primary_key[0])


def position(conn: Connection, item_id: int) -> int | None:
    """Return an item's place in line (1 = on the air or next), None once it aired or failed."""
    state = conn.execute(select(_q.state).where(_q.id == item_id)).scalar()
    if state not in ACTIVE_STATES:
        return None
    ahead = conn.execute(
        select(func.count())
        .select_from(eas_airing_queue)
        .where(_q.state.in_(ACTIVE_STATES), _q.id < item_id)
    ).scalar_one()
    return int(ahead) + 1


def is_busy(conn: Connection) -> bool:
    """Return True while any item is queued or airing."""
    found = conn.execute(select(_q.id).where(_q.state.in_(ACTIVE_STATES)).limit(1)).first()
    return found is not None


def purge_delta(header: str) -> timedelta | None:
    """Return the purge time of a header, None when it is not a valid SAME header."""
    try:
        return SameHeader.parse(header).purge
    except ValueError:
        return None


def _expired(row: Any, now: datetime) -> bool:
    delta = purge_delta(row.header)
    return delta is not None and row.enqueued_at + delta <= now


def claim_next(engine: Engine, now: datetime) -> QueueItem | None:
    """Mark the oldest queued item airing and return it; None when idle or one is on the air.

    A national message (EAN, NPT) goes ahead of everything queued before it.

    Queued items whose purge time passed before they could air are failed on the way.
    """
    with engine.connect() as conn:  # the common idle case costs one cheap read, no write
        if conn.execute(select(_q.id).where(_q.state == QUEUED).limit(1)).first() is None:
            return None
    with begin_write(engine) as conn:
        bump_generation(conn, GENERATION)  # first: serialises concurrent claimers
        if conn.execute(select(_q.id).where(_q.state == AIRING).limit(1)).first() is not None:
            return None
        rows = conn.execute(_items_query().where(_q.state == QUEUED).order_by(_q.id)).all()
        rows.sort(key=lambda row: not is_national(row.header))  # national first, then in order
        for row in rows:
            if _expired(row, now):
                conn.execute(
                    eas_airing_queue.update()
                    .where(_q.id == row.id)
                    .values(
                        state=FAILED,
                        finished_at=now,
                        error="expired: its purge time passed before it could air",
                    )
                )
                continue
            conn.execute(
                eas_airing_queue.update()
                .where(_q.id == row.id)
                .values(state=AIRING, started_at=now)
            )
            claimed = conn.execute(_items_query().where(_q.id == row.id)).one()
            return _item(claimed)
    return None


def finish(
    engine: Engine,
    item_id: int,
    *,
    error: str | None,
    outputs: dict[str, Any],
    now: datetime,
) -> None:
    """Record how an airing item ended: aired without ``error``, failed with it."""
    with begin_write(engine) as conn:
        conn.execute(
            eas_airing_queue.update()
            .where(_q.id == item_id, _q.state == AIRING)
            .values(
                state=FAILED if error else AIRED,
                finished_at=now,
                error=error,
                outputs=orjson.dumps(outputs).decode(),
            )
        )
        bump_generation(conn, GENERATION)


def recover_interrupted(engine: Engine, now: datetime) -> list[int]:
    """Fail every item left airing (its worker stopped mid-air); return their ids.

    Call it only where no airing loop runs: when the worker that leads starts its loop.
    """
    with begin_write(engine) as conn:
        ids = list(conn.execute(select(_q.id).where(_q.state == AIRING)).scalars())
        if ids:
            conn.execute(
                eas_airing_queue.update()
                .where(_q.id.in_(ids))
                .values(state=FAILED, finished_at=now, error=INTERRUPTED)
            )
            bump_generation(conn, GENERATION)
    return ids


def get_item(conn: Connection, item_id: int) -> QueueItem | None:
    """Return one queue item, or None."""
    row = conn.execute(_items_query().where(_q.id == item_id)).first()
    return _item(row) if row is not None else None


def list_items(conn: Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Return every queued or airing item and the latest finished ones, oldest first."""
    active = conn.execute(_items_query().where(_q.state.in_(ACTIVE_STATES))).all()
    done = conn.execute(
        _items_query().where(_q.state.notin_(ACTIVE_STATES)).order_by(_q.id.desc()).limit(limit)
    ).all()
    rows = sorted([*active, *done], key=lambda row: row.id)
    return [_item(row).as_dict() for row in rows]


class AiringState:
    """Whether a message is queued or on the air, for the broadcast state's ``active`` flag.

    The answer is cached and rebuilt only when the ``eas_airing`` generation moves (checked at
    most once per ``check_interval`` seconds), so every process agrees within about a second.
    A change made through this process calls :meth:`changed` to be seen at once.
    """

    def __init__(self, engine: Engine, *, check_interval: float = 1.0) -> None:
        self._cache: GenerationCache[bool] = GenerationCache(
            engine, GENERATION, is_busy, check_interval=check_interval
        )

    @property
    def active(self) -> bool:
        """Return True while any message is queued or airing."""
        return self._cache.get()

    def changed(self) -> None:
        """Forget the cached answer (after a queue change made through this process)."""
        self._cache.clear()
