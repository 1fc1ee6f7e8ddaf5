"""Auto-forward: air what waits in the CAP forward queue, and the weekly RWT job.

The alert store puts a newly stored alert on ``eas_forward_queue`` (state ``pending``) when it
starts an event in the broadcast area whose SAME event code is configured for forwarding
(docs/alerts-lifecycle.md). :func:`process_queue` takes pending entries oldest first. Each is
claimed in a write transaction (``pending`` → ``taken``, a conditional update, so two workers
never both take one) and checked again by :mod:`alertstation.alerts.airing_guard`; an entry that
fails the check or cannot be translated to SAME becomes ``skipped`` with the reason. The rest is
rendered (header, attention signal, voice from headline and description, EOMs), checked once
more right before it airs (a cancellation that arrived while the voice was being synthesised
still stops it) and handed to :func:`alertstation.eas.airing.broadcast.broadcast` with origin
``forward``. An entry whose airing raised is ``failed``. Every aired entry writes
``eas.broadcast`` to the audit ledger afterwards, as the system actor ``auto-forward``; a lost
audit row is logged and never holds up the air.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, select, update

from alertstation.alerts.airing_guard import (
    NO_CODES_REASON,
    alert_codes,
    description_of,
    refusal,
)
from alertstation.alerts.service import get_alert_settings
from alertstation.alerts.tables import cap_alerts, eas_forward_queue
from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.eas import archive, voice
from alertstation.eas.airing import broadcast
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.audio import render_message
from alertstation.eas.forward import pending
from alertstation.eas.forward.config import ForwardSettings, get_forward_settings
from alertstation.eas.forward.rulebook import get_rule_book
from alertstation.eas.forward.rules import AUTO, IMPORTED, POLL, Subject, decide
from alertstation.eas.forward.rwt import run_schedule
from alertstation.eas.forward.tables import eas_forward_airings
from alertstation.eas.forward.translate import (
    ORIGINATOR,
    area_locations,
    issue_minute,
    purge_for,
    voice_text,
)
from alertstation.same import SameHeader

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger("alertstation.eas")

PENDING: Final[str] = "pending"
TAKEN: Final[str] = "taken"
SKIPPED: Final[str] = "skipped"
FAILED: Final[str] = "failed"
ACTOR_NAME: Final[str] = "auto-forward"
#: Entries one run takes at most, so a flood cannot hold the leader's loop for long.
BATCH: Final[int] = 20

_q = eas_forward_queue.c
_f = eas_forward_airings.c


@dataclass(frozen=True)
class ForwardOutcome:
    """What became of one queue entry: ``aired``, ``skipped`` or ``failed``, and why."""

    queue_id: int
    alert_id: int
    identifier: str
    event_code: str
    outcome: str
    detail: str
    message_id: int | None = None

    def line(self) -> str:
        """Return the one-line form the CLI prints."""
        return f"{self.queue_id} {self.identifier} {self.event_code} {self.outcome}: {self.detail}"


@dataclass(frozen=True)
class _Claim:
    """A queue entry this worker took, with the message built for it."""

    queue_id: int
    alert_id: int
    identifier: str
    event_code: str
    header: SameHeader
    speech_text: str
    note: str
    settings: ForwardSettings
    sample_rate: int
    speaker: voice.VoiceSettings
    source: str
    expires_at: datetime


def worker_name() -> str:
    """Return this process's name in claims: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


def forward_job(station: Station) -> None:
    """Air what waits in the forward queue (the leader's 5-second job).

    First the approval queue: expired items are dropped and holds whose time came are released.
    """
    for line in pending.run_due(station):
        log.warning("approval queue: %s", line)
    for outcome in process_queue(station):
        level = logging.WARNING if outcome.outcome != "skipped" else logging.INFO
        log.log(level, "auto-forward: %s", outcome.line())


def rwt_job(station: Station) -> None:
    """Air the weekly test when it falls due (the leader's 30-second job)."""
    run_schedule(station)


def process_queue(
    station: Station, *, worker: str | None = None, limit: int = BATCH
) -> list[ForwardOutcome]:
    """Take pending entries oldest first and air or skip each; return what became of them."""
    name = worker or worker_name()
    outcomes: list[ForwardOutcome] = []
    while len(outcomes) < limit:
        step = _claim_next(station, name)
        if step is None:
            break
        if isinstance(step, list):
            outcomes.extend(step)
            continue
        outcomes.append(_air(station, step))
    return outcomes


def _entry(conn: Connection, queue_id: int) -> Any:
    return conn.execute(
        select(_q.id, _q.alert_id, _q.event_code, _q.queued_at, cap_alerts.c.identifier)
        .join(cap_alerts, cap_alerts.c.id == _q.alert_id)
        .where(_q.id == queue_id)
    ).one()


def _set_state(conn: Connection, queue_id: int, state: str, reason: str) -> None:
    conn.execute(
        update(eas_forward_queue).where(_q.id == queue_id).values(state=state, reason=reason)
    )


def _claim_next(station: Station, worker: str) -> _Claim | list[ForwardOutcome] | None:
    """Claim the oldest pending entry and check it; None when nothing is pending."""
    with begin_write(station.engine) as conn:
        now = station.clock()
        settings = get_forward_settings(conn)
        queue_id = conn.execute(
            select(_q.id).where(_q.state == PENDING).order_by(_q.id).limit(1)
        ).scalar()
        if queue_id is None:
            return None
        claimed = conn.execute(
            update(eas_forward_queue)
            .where(_q.id == queue_id, _q.state == PENDING)
            .values(state=TAKEN, reason="")
        ).rowcount
        if claimed != 1:
            return []  # another worker took it first: look again
        entry = _entry(conn, queue_id)
        alert_settings = get_alert_settings(conn)
        reason = refusal(
            conn,
            entry.alert_id,
            entry.queued_at,
            max_age_minutes=settings.max_age_minutes,
            forward_events=None,
            now=now,
        )
        claim: _Claim | None = None
        if not reason:
            try:
                rate = settings_airing.load(conn).sample_rate
                claim = _translate(conn, entry, settings, alert_settings.zone_codes, now, rate)
            except ValueError as ex:
                reason = f"cannot translate to SAME: {ex}"
        if claim is None:
            _set_state(conn, queue_id, SKIPPED, reason)
            return [_outcome(entry, SKIPPED, reason)]
        if not pending.released(conn, queue_id):
            decision = decide(get_rule_book(conn), _subject(claim))
            if decision.mode.mode != AUTO:
                item = pending.park(
                    conn,
                    origin="forward",
                    source=claim.source,
                    header=claim.header.encode(),
                    event_code=claim.event_code,
                    decision=decision,
                    now=now,
                    expires_at=claim.expires_at,
                    queue_id=queue_id,
                )
                detail = f"{decision.mode.mode} by {decision.rule}: pending {item}"
                return [_outcome(entry, pending.AWAITING, detail)]
        conn.execute(
            eas_forward_airings.insert().values(
                queue_id=queue_id,
                claimed_at=now,
                claimed_by=worker,
                header=claim.header.encode(),
                voice="none",
                note=claim.note,
            )
        )
        return claim


def _outcome(
    entry: Any, outcome: str, detail: str, message_id: int | None = None
) -> ForwardOutcome:
    return ForwardOutcome(
        entry.id, entry.alert_id, entry.identifier, entry.event_code, outcome, detail, message_id
    )


def _translate(
    conn: Connection,
    entry: Any,
    settings: ForwardSettings,
    area: tuple[str, ...],
    now: datetime,
    sample_rate: int,
) -> _Claim:
    """Build the header and voice text of a checked entry; ValueError when it cannot be done."""
    alert = conn.execute(select(cap_alerts).where(cap_alerts.c.id == entry.alert_id)).one()
    locations = area_locations(alert_codes(conn, alert.id), area)
    if not locations.codes:
        raise ValueError("none of the alert's SAME location codes lies in the broadcast area")
    issued = issue_minute(now)
    header = SameHeader.build(
        ORIGINATOR,
        alert.event_code,
        locations.codes,
        purge_for(alert.expires or alert.ends, issued),
        settings.station_id,
        issued=issued,
    )
    speech = ""
    if settings.include_voice:
        speech = voice_text(alert.headline, description_of(alert.raw, alert.identifier))
    return _Claim(
        entry.id,
        entry.alert_id,
        entry.identifier,
        entry.event_code,
        header,
        speech,
        locations.note,
        settings,
        sample_rate,
        voice.saved_voice(conn),
        alert_source(alert),
        alert.expires or alert.ends or now + timedelta(minutes=settings.max_age_minutes),
    )


def alert_source(alert: Any) -> str:
    """Return the rules' source of a stored alert: ``poll:<id>`` of the poll source that fetched
    it, ``imported`` for a file or command-line import, ``poll`` when not known (stored before
    the poll source was recorded)."""
    if alert.poll_source_id is not None:
        return f"{POLL}:{alert.poll_source_id}"
    return IMPORTED if alert.explicit else POLL


def _subject(claim: _Claim) -> Subject:
    """Return what the forwarding rules see of a claimed CAP alert."""
    header = claim.header
    return Subject(header.event, header.org, claim.source, header.locations)


def _speech(claim: _Claim) -> tuple[Any, str]:
    """Synthesise the voice; without speech the message airs without it (logged)."""
    if not claim.speech_text:
        return None, "none"
    try:
        return voice.speak(claim.speaker, claim.speech_text, claim.sample_rate), "spoken"
    except (voice.SpeechUnavailable, ValueError) as ex:
        log.warning("auto-forward of queue entry %s airs without voice: %s", claim.queue_id, ex)
        return None, "unavailable"


def _render(claim: _Claim) -> tuple[archive.AiredMessage, str]:
    """Render a claimed entry's whole message; return it and how its voice turned out."""
    speech, spoken = _speech(claim)
    samples = render_message(
        claim.header,
        sample_rate=claim.sample_rate,
        attention_seconds=claim.settings.attention_seconds,
        voice=speech,
        attention="nwr" if claim.settings.nwr_tone else "eas",
    )
    return archive.AiredMessage(claim.header.encode(), samples, claim.sample_rate), spoken


def _fail(station: Station, claim: _Claim, error: str, spoken: str) -> ForwardOutcome:
    """Mark a claimed entry failed with ``error``; it is never retried on its own."""
    log.error("auto-forward of queue entry %s failed: %s", claim.queue_id, error)
    with begin_write(station.engine) as conn:
        _set_state(conn, claim.queue_id, FAILED, error)
        _record(conn, claim.queue_id, voice=spoken, error=error)
    return _claim_outcome(claim, FAILED, error)


def _claim_outcome(
    claim: _Claim, outcome: str, detail: str, message_id: int | None = None
) -> ForwardOutcome:
    return ForwardOutcome(
        claim.queue_id,
        claim.alert_id,
        claim.identifier,
        claim.event_code,
        outcome,
        detail,
        message_id,
    )


def _air(station: Station, claim: _Claim) -> ForwardOutcome:
    """Render a claimed entry, check it once more, air it, record and audit it."""
    try:
        message, spoken = _render(claim)
    except Exception as ex:
        return _fail(station, claim, f"rendering failed: {ex}", "none")
    with begin_write(station.engine) as conn:
        entry = _entry(conn, claim.queue_id)
        reason = refusal(
            conn,
            entry.alert_id,
            entry.queued_at,
            max_age_minutes=claim.settings.max_age_minutes,
            forward_events=None,
            now=station.clock(),
        )
        # Codes of the alert may have ended since the claim: air the codes still in force.
        zone_codes = get_alert_settings(conn).zone_codes
        codes = area_locations(alert_codes(conn, entry.alert_id), zone_codes).codes
        if not reason and not codes:
            reason = NO_CODES_REASON
        if reason:
            _set_state(conn, claim.queue_id, SKIPPED, reason)
            _record(conn, claim.queue_id, voice=spoken, error=f"not aired: {reason}")
            return _claim_outcome(claim, SKIPPED, reason)
    if codes and tuple(codes) != claim.header.locations:
        claim = dataclasses.replace(
            claim, header=dataclasses.replace(claim.header, locations=tuple(codes))
        )
        try:
            message, spoken = _render(claim)
        except Exception as ex:
            return _fail(station, claim, f"rendering failed: {ex}", "none")
    try:
        row = broadcast.broadcast(
            station,
            origin="forward",
            render=lambda _rate: message,
            actor=Actor.system(ACTOR_NAME),
            target=f"eas_forward:{claim.queue_id}",
            aired_by=ACTOR_NAME,
            details={
                "alert_id": claim.alert_id,
                "identifier": claim.identifier,
                "voice": spoken,
            },
            sample_rate=message.sample_rate,
        )
    except Exception as ex:  # record what broke; the entry is never retried on its own
        return _fail(station, claim, f"airing failed: {getattr(ex, 'message', None) or ex}", spoken)
    message_id = int(row["id"])
    with begin_write(station.engine) as conn:
        _record(
            conn, claim.queue_id, voice=spoken, message_id=message_id,
            aired_at=station.clock(), header=message.header,
        )  # fmt: skip
    return _claim_outcome(claim, "aired", message.header, message_id)


def _record(conn: Connection, queue_id: int, *, voice: str, **values: Any) -> None:
    conn.execute(
        update(eas_forward_airings).where(_f.queue_id == queue_id).values(voice=voice, **values)
    )


def recent_queue(conn: Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Return the newest forward-queue entries with their alert and airing, newest first."""
    a = cap_alerts.c
    rows = conn.execute(
        select(
            _q.id,
            _q.alert_id,
            _q.event_code,
            _q.queued_at,
            _q.state,
            _q.reason,
            a.identifier,
            a.headline,
            a.state.label("alert_state"),
            _f.header,
            _f.voice,
            _f.note,
            _f.message_id,
            _f.claimed_at,
            _f.claimed_by,
            _f.aired_at,
            _f.error,
        )
        .join(cap_alerts, a.id == _q.alert_id)
        .outerjoin(eas_forward_airings, _f.queue_id == _q.id)
        .order_by(_q.id.desc())
        .limit(limit)
    ).all()
    return [
        {
            "id": row.id,
            "alert_id": row.alert_id,
            "identifier": row.identifier,
            "headline": row.headline,
            "alert_state": row.alert_state,
            "event_code": row.event_code,
            "queued_at": row.queued_at.isoformat(),
            "state": row.state,
            "reason": row.reason,
            "header": row.header,
            "voice": row.voice,
            "note": row.note,
            "message_id": row.message_id,
            "claimed_at": row.claimed_at.isoformat() if row.claimed_at else None,
            "claimed_by": row.claimed_by,
            "aired_at": row.aired_at.isoformat() if row.aired_at else None,
            "error": row.error,
        }
        for row in rows
    ]
