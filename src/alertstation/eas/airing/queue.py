"""The airing queue: put archived messages in line, claim the next, record how it aired.

Every message the station airs is first archived, then queued here (``eas_airing_queue``) in
the same transaction (:func:`alertstation.eas.airing.broadcast.broadcast`). The worker's airing
loop claims the oldest queued item, plays it through the outputs and records the result, one row
per output (``eas_airing_outputs``). One message airs at a time across every process and host: a
claim is refused while another item is on the air, and claims are serialised by bumping the
``eas_airing`` generation first thing in their write transaction (a row lock on PostgreSQL,
``BEGIN IMMEDIATE`` on SQLite).

An airing's result says what reached the air (docs/eas-airing.md): ``aired`` when a real output
(Icecast, ALSA) played it to the end, ``archived_only`` when no real output was enabled (or the
operator chose archive only), ``failed`` when real outputs were enabled and none played it to the
end, ``stopped`` when an operator's Stop ended it, ``removed`` when it was taken off the queue
before airing and ``interrupted`` when the worker stopped while it aired.

A queued item whose purge time (from the header, counted from when it was queued) has passed is
failed at claim time instead of aired: an alert that expired while no worker ran is not sent
late. An item left ``airing`` by a worker that stopped is marked ``interrupted`` by
:func:`recover_interrupted` when the next airing loop starts; it is not aired again on its own.

Stop is asked for in the database (:func:`request_stop`, from any web process); the airing loop
checks for it while it plays (:func:`stop_requested`).

:class:`AiringState` answers the broadcast state's ``airing``, ``on_air`` and ``now_airing`` from
the ``eas_airing`` generation, so a request costs no query beyond the generation check it already
makes at most once a second.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, Engine, func, select

from alertstation.db.engine import begin_write
from alertstation.db.generations import GenerationCache, bump_generation
from alertstation.eas.airing.tables import ORIGINS, eas_airing_outputs, eas_airing_queue
from alertstation.eas.log import airing_kind, record_entry
from alertstation.eas.log.record import REMOVED as LOG_REMOVED
from alertstation.eas.log.record import STOPPED as LOG_STOPPED
from alertstation.eas.plain import PlainLanguage
from alertstation.eas.tables import eas_archive
from alertstation.errors import Conflict, NotFound
from alertstation.same import EVENTS, SameHeader, is_national
from alertstation.zones.places import PlaceNames

GENERATION: Final[str] = "eas_airing"
QUEUED: Final[str] = "queued"
AIRING: Final[str] = "airing"
AIRED: Final[str] = "aired"
ARCHIVED_ONLY: Final[str] = "archived_only"
FAILED: Final[str] = "failed"
STOPPED: Final[str] = "stopped"
REMOVED: Final[str] = "removed"
INTERRUPTED: Final[str] = "interrupted"
ACTIVE_STATES: Final[tuple[str, str]] = (QUEUED, AIRING)
#: The outputs that put a message on the air; the archive and the relays do not.
REAL_OUTPUTS: Final[frozenset[str]] = frozenset({"icecast", "alsa"})
INTERRUPTED_ERROR: Final[str] = (
    "interrupted: the worker stopped while this message was on the air; "
    "it is not aired again automatically (resend it if it must air)"
)

_q = eas_airing_queue.c
_o = eas_airing_outputs.c
_a = eas_archive.c


@dataclass(frozen=True)
class QueueItem:
    """One queue row with the archived message it plays and its outputs' results."""

    id: int
    archive_id: int
    origin: str
    state: str
    archive_only: bool
    enqueued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    stop_requested_at: datetime | None
    stop_requested_by: str | None
    header: str
    wav_path: str
    sample_rate: int
    duration: float
    aired_by: str | None
    outputs: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self, text: str | None = None) -> dict[str, Any]:
        """Return the item as JSON-ready data (every output's result in ``outputs``), with the
        plain-language ``text`` of its header when given."""
        return {
            "id": self.id,
            "message_id": self.archive_id,
            "origin": self.origin,
            "state": self.state,
            "archive_only": self.archive_only,
            "header": self.header,
            "text": text,
            "duration": self.duration,
            "aired_by": self.aired_by,
            "enqueued_at": self.enqueued_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "error": self.error,
            "stopped_by": self.stop_requested_by if self.state == STOPPED else None,
            "outputs": self.outputs,
        }


def _items_query() -> Any:
    return select(
        eas_airing_queue, _a.header, _a.wav_path, _a.sample_rate, _a.duration, _a.aired_by
    ).join(eas_archive, _a.id == _q.archive_id)


def _output_dict(row: Any) -> dict[str, Any]:
    return {
        "name": row.name,
        "ok": row.ok,
        "error": row.error,
        "started_at": row.started_at.isoformat(),
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
    }


def _outputs_of(conn: Connection, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if ids:
        query = select(eas_airing_outputs).where(_o.queue_id.in_(ids)).order_by(_o.id)
        for row in conn.execute(query):
            found[row.queue_id].append(_output_dict(row))
    return found


def _item(row: Any, outputs: list[dict[str, Any]] | None = None) -> QueueItem:
    return QueueItem(
        id=row.id,
        archive_id=row.archive_id,
        origin=row.origin,
        state=row.state,
        archive_only=bool(row.archive_only),
        enqueued_at=row.enqueued_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        error=row.error,
        stop_requested_at=row.stop_requested_at,
        stop_requested_by=row.stop_requested_by,
        header=row.header,
        wav_path=row.wav_path,
        sample_rate=row.sample_rate,
        duration=row.duration,
        aired_by=row.aired_by,
        outputs=outputs or [],
    )


def _log_end(
    conn: Connection,
    row: Any,
    *,
    state: str,
    error: str | None,
    now: datetime,
    outputs: list[dict[str, Any]] | None = None,
) -> None:
    """Log an airing's end in the station log, in the transaction that records it; the plain
    text is the one of this moment (see ``alertstation.eas.log``)."""
    record_entry(
        conn,
        airing_kind(row.origin, row.header),
        at=now,
        source=row.origin,
        header=row.header,
        result=state,
        by=row.aired_by,
        details={
            "queue_id": row.id,
            "message_id": row.archive_id,
            "archive_only": bool(row.archive_only),
            "started_at": row.started_at,
            "error": error,
            "outputs": outputs or [],
        },
    )


def _log_removed(conn: Connection, row: Any, *, by: str | None, now: datetime) -> None:
    _log_action(conn, row, LOG_REMOVED, REMOVED, by=by, now=now)


def _log_action(
    conn: Connection, row: Any, kind: str, result: str, *, by: str | None, now: datetime
) -> None:
    """Log an operator's action on a queue item (stopped, removed) in the station log."""
    record_entry(
        conn,
        kind,
        at=now,
        source=row.origin,
        header=row.header,
        result=result,
        by=by,
        details={"queue_id": row.id, "message_id": row.archive_id},
    )


def enqueue(
    conn: Connection, archive_id: int, origin: str, now: datetime, *, archive_only: bool = False
) -> int:
    """Queue an archived message inside the caller's write transaction; return the item id."""
    if origin not in ORIGINS:
        raise ValueError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
    result = conn.execute(
        eas_airing_queue.insert().values(
            archive_id=archive_id,
            origin=origin,
            state=QUEUED,
            archive_only=archive_only,
            enqueued_at=now,
        )
    )
    bump_generation(conn, GENERATION)
    return int(result.inserted_primary_key[0])


def position(conn: Connection, item_id: int) -> int | None:
    """Return an item's place in line (1 = on the air or next), None once it is done."""
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


def claim_next(
    engine: Engine,
    now: datetime,
    on_end: Callable[[Connection, QueueItem], None] | None = None,
) -> QueueItem | None:
    """Mark the oldest queued item airing and return it; None when idle or one is on the air.

    A national message (EAN, NPT) goes ahead of everything queued before it.

    Queued items whose purge time passed before they could air are failed on the way (each
    handed to ``on_end`` in the same transaction, as ``finish`` does).
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
                _log_end(
                    conn,
                    row,
                    state=FAILED,
                    error="expired: its purge time passed before it could air",
                    now=now,
                )
                if on_end is not None:
                    on_end(conn, _item(conn.execute(_items_query().where(_q.id == row.id)).one()))
                continue
            conn.execute(
                eas_airing_queue.update()
                .where(_q.id == row.id)
                .values(state=AIRING, started_at=now)
            )
            claimed = conn.execute(_items_query().where(_q.id == row.id)).one()
            return _item(claimed)
    return None


def start_outputs(engine: Engine, item_id: int, names: list[str], now: datetime) -> None:
    """Record that an airing item started playing through ``names`` (``ok`` unknown yet)."""
    with begin_write(engine) as conn:
        for name in names:
            conn.execute(
                eas_airing_outputs.insert().values(queue_id=item_id, name=name, started_at=now)
            )
        bump_generation(conn, GENERATION)


def result_state(results: dict[str, Any], *, stopped: bool) -> str:
    """Return an airing's state from its outputs' results (see the module text)."""
    if stopped:
        return STOPPED
    real = [result for name, result in results.items() if name in REAL_OUTPUTS]
    if not real:
        return FAILED if any(not r["ok"] for r in results.values()) else ARCHIVED_ONLY
    return AIRED if any(result["ok"] for result in real) else FAILED


def finish(
    engine: Engine,
    item_id: int,
    *,
    state: str,
    error: str | None,
    outputs: dict[str, Any],
    now: datetime,
    on_end: Callable[[Connection, QueueItem], None] | None = None,
) -> None:
    """Record how an airing item ended and each output's result (``ok``, ``error``, times).

    ``on_end`` is called with the ended item in the same transaction (its notifications and
    feed messages are written with the result or not at all).
    """
    with begin_write(engine) as conn:
        ended = conn.execute(
            eas_airing_queue.update()
            .where(_q.id == item_id, _q.state == AIRING)
            .values(state=state, finished_at=now, error=error)
        ).rowcount
        started = dict(
            conn.execute(
                select(_o.name, _o.id).where(_o.queue_id == item_id, _o.ended_at.is_(None))
            ).all()
        )
        for name, result in outputs.items():
            values = {
                "ok": bool(result["ok"]),
                "error": result.get("error"),
                "ended_at": result.get("ended_at") or now,
            }
            if name in started:
                conn.execute(
                    eas_airing_outputs.update().where(_o.id == started.pop(name)).values(**values)
                )
            else:
                conn.execute(
                    eas_airing_outputs.insert().values(
                        queue_id=item_id,
                        name=name[:16],
                        started_at=result.get("started_at") or now,
                        **values,
                    )
                )
        for output_id in started.values():  # started but no result: the airing broke
            conn.execute(
                eas_airing_outputs.update()
                .where(_o.id == output_id)
                .values(ok=False, ended_at=now, error=error or "no result")
            )
        row = conn.execute(_items_query().where(_q.id == item_id)).first()
        if ended and row is not None:
            logged = _outputs_of(conn, [item_id])[item_id]
            _log_end(conn, row, state=state, error=error, now=now, outputs=logged)
            if on_end is not None:
                on_end(conn, _item(row, logged))
        bump_generation(conn, GENERATION)


def stop_requested(engine: Engine, item_id: int) -> bool:
    """Return True once an operator asked to stop the airing item ``item_id``."""
    with engine.connect() as conn:
        asked = conn.execute(select(_q.stop_requested_at).where(_q.id == item_id)).scalar()
    return asked is not None


def request_stop(
    conn: Connection, *, by: str | None, now: datetime, clear_queue: bool
) -> tuple[QueueItem, list[int]]:
    """Ask the airing loop to stop the item on the air; with ``clear_queue`` remove the rest.

    Runs in the caller's write transaction; returns the item on the air and the ids removed.
    409 ``nothing_on_air`` when no item is on the air.
    """
    bump_generation(conn, GENERATION)  # first: serialises with claims
    row = conn.execute(_items_query().where(_q.state == AIRING).limit(1)).first()
    if row is None:
        raise Conflict("No message is on the air.", code="nothing_on_air")
    asked = conn.execute(
        eas_airing_queue.update()
        .where(_q.id == row.id, _q.stop_requested_at.is_(None))
        .values(stop_requested_at=now, stop_requested_by=by)
    ).rowcount
    if asked:
        _log_action(conn, row, LOG_STOPPED, STOPPED, by=by, now=now)
    removed: list[int] = []
    if clear_queue:
        queued = conn.execute(_items_query().where(_q.state == QUEUED).order_by(_q.id)).all()
        removed = [item.id for item in queued]
        for item in queued:
            _log_removed(conn, item, by=by, now=now)
        if removed:
            conn.execute(
                eas_airing_queue.update()
                .where(_q.id.in_(removed))
                .values(state=REMOVED, finished_at=now, error=f"removed by {by}")
            )
    return _item(row), removed


#: Who a message cut for a national message was stopped by (``stop_requested_by``).
NATIONAL_CUT: Final[str] = "national message"


def cut_for_national(conn: Connection, header: str, *, now: datetime) -> QueueItem | None:
    """Cut the message on the air, with its EOM, for a national message (EAN, NPT; 11.54) that
    is being queued; return the item cut, or None (``header`` is not national, nothing is on
    the air, or a national message is). Runs in the caller's write transaction."""
    if not is_national(header):
        return None
    row = conn.execute(_items_query().where(_q.state == AIRING).limit(1)).first()
    if row is None or is_national(row.header):
        return None
    item, _ = request_stop(conn, by=NATIONAL_CUT, now=now, clear_queue=False)
    return item


def remove(conn: Connection, item_id: int, *, by: str | None, now: datetime) -> QueueItem:
    """Take a queued item off the queue (``removed``) in the caller's write transaction.

    404 when there is no such item; 409 ``on_air`` for the item on the air (use Stop), 409
    ``not_queued`` for one that has already aired or ended.
    """
    bump_generation(conn, GENERATION)  # first: serialises with claims
    row = conn.execute(_items_query().where(_q.id == item_id)).first()
    if row is None:
        raise NotFound(f"No airing queue item {item_id}.")
    if row.state == AIRING:
        raise Conflict(f"Queue item {item_id} is on the air; use Stop to end it.", code="on_air")
    if row.state != QUEUED:
        raise Conflict(f"Queue item {item_id} is already {row.state}.", code="not_queued")
    conn.execute(
        eas_airing_queue.update()
        .where(_q.id == item_id)
        .values(state=REMOVED, finished_at=now, error=f"removed by {by}")
    )
    _log_removed(conn, row, by=by, now=now)
    return _item(row)


def recover_interrupted(engine: Engine, now: datetime) -> list[int]:
    """Mark every item left airing (its worker stopped mid-air) interrupted; return their ids.

    Call it only where no airing loop runs: when the worker that leads starts its loop.
    """
    with begin_write(engine) as conn:
        rows = conn.execute(_items_query().where(_q.state == AIRING)).all()
        ids = [row.id for row in rows]
        if ids:
            conn.execute(
                eas_airing_queue.update()
                .where(_q.id.in_(ids))
                .values(state=INTERRUPTED, finished_at=now, error=INTERRUPTED_ERROR)
            )
            conn.execute(
                eas_airing_outputs.update()
                .where(_o.queue_id.in_(ids), _o.ended_at.is_(None))
                .values(ok=False, ended_at=now, error=INTERRUPTED)
            )
            outputs = _outputs_of(conn, ids)
            for row in rows:
                _log_end(
                    conn,
                    row,
                    state=INTERRUPTED,
                    error=INTERRUPTED_ERROR,
                    now=now,
                    outputs=outputs[row.id],
                )
            bump_generation(conn, GENERATION)
    return ids


def get_item(conn: Connection, item_id: int) -> QueueItem | None:
    """Return one queue item with its outputs, or None."""
    row = conn.execute(_items_query().where(_q.id == item_id)).first()
    return _item(row, _outputs_of(conn, [item_id])[item_id]) if row is not None else None


def list_items(conn: Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Return every queued or airing item and the latest finished ones, oldest first."""
    active = conn.execute(_items_query().where(_q.state.in_(ACTIVE_STATES))).all()
    done = conn.execute(
        _items_query().where(_q.state.notin_(ACTIVE_STATES)).order_by(_q.id.desc()).limit(limit)
    ).all()
    rows = sorted([*active, *done], key=lambda row: row.id)
    outputs = _outputs_of(conn, [row.id for row in rows])
    plain = PlainLanguage.for_connection(conn)
    return [
        _item(row, outputs[row.id]).as_dict(plain.text_or_none(row.header, near=row.enqueued_at))
        for row in rows
    ]


def states_of_messages(conn: Connection, message_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Return, per archived message, its latest queue item's ``state``, id and when it ended."""
    found: dict[int, dict[str, Any]] = {}
    if not message_ids:
        return found
    query = (
        select(_q.archive_id, _q.id, _q.state, _q.started_at, _q.finished_at)
        .where(_q.archive_id.in_(message_ids))
        .order_by(_q.id)
    )
    for row in conn.execute(query):
        found[row.archive_id] = {
            "queue_id": row.id,
            "state": row.state,
            "started_at": row.started_at.isoformat() if row.started_at else None,
            "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        }
    return found


def event_name(header: str) -> str:
    """Return the event's name for a header ("Tornado Warning"), its code when unknown."""
    parts = header.split("-")
    code = parts[2] if len(parts) > 2 else ""
    known = EVENTS.get(code)
    return known.name if known is not None else code or "Unknown event"


def plain_text(conn: Connection, header: str, near: datetime | None = None) -> str | None:
    """Return the plain-language text of a header (None for header text that does not parse)."""
    return PlainLanguage.for_connection(conn).text_or_none(header, near=near)


def area_names(locations: list[str]) -> list[str]:
    """Name each location code as the plain-language text does ("Putnam, OH")."""
    return PlaceNames().describe_all(locations)


@dataclass(frozen=True)
class AiringSnapshot:
    """What the broadcast state needs from the queue: busy, on the air, and what airs."""

    busy: bool
    on_air: bool
    now_airing: dict[str, Any] | None


IDLE: Final[AiringSnapshot] = AiringSnapshot(False, False, None)


def airing_snapshot(conn: Connection) -> AiringSnapshot:
    """Read the queue's busy flag and the item on the air, for :class:`AiringState`.

    ``now_airing`` is public: its outputs carry only their name and whether they are ok.
    """
    if not is_busy(conn):
        return IDLE
    row = conn.execute(_items_query().where(_q.state == AIRING).limit(1)).first()
    if row is None:
        return AiringSnapshot(True, False, None)
    outputs = _outputs_of(conn, [row.id])[row.id]
    on_air = any(
        output["name"] in REAL_OUTPUTS and output["ended_at"] is None for output in outputs
    )
    locations = [code for code in row.header.split("+", 1)[0].split("-")[3:] if code]
    now_airing = {
        "id": row.id,
        "origin": row.origin,
        "event": event_name(row.header),
        "header": row.header,
        "text": plain_text(conn, row.header, row.enqueued_at),
        "areas": area_names(locations),
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "outputs": [{"name": o["name"], "ok": o["ok"] is not False} for o in outputs],
    }
    return AiringSnapshot(True, on_air, now_airing)


class AiringState:
    """The queue's busy flag and the item on the air, for the broadcast state.

    The answer is cached and rebuilt only when the ``eas_airing`` generation moves (checked at
    most once per ``check_interval`` seconds), so every process agrees within about a second.
    A change made through this process calls :meth:`changed` to be seen at once.
    """

    def __init__(self, engine: Engine, *, check_interval: float = 1.0) -> None:
        self._cache: GenerationCache[AiringSnapshot] = GenerationCache(
            engine, GENERATION, airing_snapshot, check_interval=check_interval
        )

    @property
    def active(self) -> bool:
        """Return True while any message is queued or airing."""
        return self._cache.get().busy

    @property
    def snapshot(self) -> AiringSnapshot:
        """Return the cached snapshot: busy, on the air, and what airs."""
        return self._cache.get()

    def changed(self) -> None:
        """Forget the cached answer (after a queue change made through this process)."""
        self._cache.clear()
