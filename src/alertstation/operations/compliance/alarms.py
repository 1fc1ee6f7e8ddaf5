"""Compliance alarms, raised and cleared by the compliance job (one call: :func:`evaluate`).

Three kinds, each at most once open per source:

* ``source_silent``: an assigned source delivered neither an RWT nor an RMT in the last
  ``silence_days`` days (counted from its assignment when it never delivered one);
* ``rmt_unaired``: 45 minutes passed since an in-area RMT was first received and the station
  has not aired its relay; cleared when it airs, or when the message's valid time ends;
* ``station_test``: the station aired (result ``aired``) neither an RWT nor an RMT, nor a
  national periodic test (NPT), in the last 7 days.

:func:`evaluate` returns what changed (alarms raised and cleared, deadlines decided) as plain
rows, for whoever tells people about them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final
from urllib.parse import urlencode

from sqlalchemy import Connection, func, insert, select, update

from alertstation.alerts.poll.tables import poll_sources
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.tables import eas_archive
from alertstation.operations.compliance.deadlines import (
    AIRED,
    DeadlineOutcome,
    settle_deadlines,
    track_deadlines,
)
from alertstation.operations.compliance.settings import assignments, get_compliance_settings
from alertstation.operations.compliance.tables import DETAIL_WIDTH, compliance_alarms, rmt_deadlines
from alertstation.same import SameHeader

SOURCE_SILENT: Final[str] = "source_silent"
RMT_UNAIRED: Final[str] = "rmt_unaired"
STATION_TEST: Final[str] = "station_test"
KINDS: Final[tuple[str, ...]] = (SOURCE_SILENT, RMT_UNAIRED, STATION_TEST)
#: How an alarm kind reads to an operator (notifications, the page).
ALARM_NAMES: Final[dict[str, str]] = {
    SOURCE_SILENT: "assigned source without a weekly or monthly test",
    RMT_UNAIRED: "monthly test not relayed after 45 minutes",
    STATION_TEST: "no weekly test aired in 7 days",
}
#: The kinds that say a required test was missed: their alarm links to "record the reason".
MISSED_TEST_KINDS: Final[frozenset[str]] = frozenset({SOURCE_SILENT, STATION_TEST})
STATION: Final[str] = "station"
TEST_EVENTS: Final[tuple[str, ...]] = ("RWT", "RMT")
#: The tests that count as the station's own weekly test (a national test counts too).
OWN_TEST_EVENTS: Final[tuple[str, ...]] = ("RWT", "RMT", "NPT")
#: An unaired RMT raises its alarm this long after it was first received.
RMT_ALARM_AFTER: Final[timedelta] = timedelta(minutes=45)
#: The station must air a weekly test at least this often (47 CFR 11.61(a)(2)).
OWN_TEST_PERIOD: Final[timedelta] = timedelta(days=7)

_L = compliance_alarms.c
_D = rmt_deadlines.c
_R = received_eas_messages.c
_Q = eas_airing_queue.c
_A = eas_archive.c


@dataclass
class Evaluation:
    """What one round changed: alarms raised and cleared, RMT deadlines decided."""

    raised: list[dict[str, Any]] = field(default_factory=list)
    cleared: list[dict[str, Any]] = field(default_factory=list)
    deadlines: list[DeadlineOutcome] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Return one log line per change."""
        return (
            [
                f"compliance alarm raised: {a['kind']} {a['source']}: {a['detail']}"
                for a in self.raised
            ]
            + [f"compliance alarm cleared: {a['kind']} {a['source']}" for a in self.cleared]
            + [f"RMT deadline {'met' if d.met else 'missed'}: {d.header}" for d in self.deadlines]
        )


def record_reason_url(source: str) -> str:
    """Where an operator records why a required test was missed (the station log's note form)."""
    return f"/eas/log?{urlencode({'topic': 'missed_test', 'note_source': source})}#note-heading"


def evaluate(conn: Connection, now: datetime) -> Evaluation:
    """Raise and clear every compliance alarm at ``now`` inside the caller's write transaction."""
    result = Evaluation()
    track_deadlines(conn, now)
    result.deadlines = settle_deadlines(conn, now)
    wanted: dict[tuple[str, str], str] = {}
    wanted.update(_silent_sources(conn, now))
    wanted.update(_unaired_rmts(conn, now))
    wanted.update(_station_tests(conn, now))
    open_rows = {(row.kind, row.source): row for row in conn.execute(open_alarms_query()).all()}
    for (kind, source), detail in wanted.items():
        if (kind, source) not in open_rows:
            new_id = conn.execute(
                insert(compliance_alarms).values(
                    kind=kind, source=source, detail=detail[:DETAIL_WIDTH], raised_at=now
                )
            ).inserted_primary_key[0]
            result.raised.append(alarm_as_dict_values(int(new_id), kind, source, detail, now, None))
    for key, row in open_rows.items():
        if key not in wanted:
            conn.execute(update(compliance_alarms).where(_L.id == row.id).values(cleared_at=now))
            result.cleared.append(
                alarm_as_dict_values(row.id, row.kind, row.source, row.detail, row.raised_at, now)
            )
    return result


def open_alarms_query() -> Any:
    """Return the query of the open alarms, oldest first."""
    return select(compliance_alarms).where(_L.cleared_at.is_(None)).order_by(_L.raised_at, _L.id)


def open_alarms(conn: Connection) -> list[dict[str, Any]]:
    """Return the open alarms as JSON."""
    return [
        alarm_as_dict_values(r.id, r.kind, r.source, r.detail, r.raised_at, r.cleared_at)
        for r in conn.execute(open_alarms_query()).all()
    ]


def alarm_as_dict_values(
    alarm_id: int,
    kind: str,
    source: str,
    detail: str,
    raised_at: datetime,
    cleared_at: datetime | None,
) -> dict[str, Any]:
    """Return an alarm as JSON; a missed-test alarm links to the log to record the reason."""
    return {
        "id": alarm_id,
        "kind": kind,
        "source": source,
        "detail": detail,
        "raised_at": raised_at.isoformat(),
        "cleared_at": cleared_at.isoformat() if cleared_at else None,
        "record_reason_url": record_reason_url(source) if kind in MISSED_TEST_KINDS else None,
    }


# --- the conditions ----------------------------------------------------------------------------


def last_audio_tests(conn: Connection) -> dict[int, datetime]:
    """Return each audio source's last reception of an RWT or RMT."""
    rows = conn.execute(
        select(_R.source_id, func.max(_R.received_at))
        .where(_R.event_code.in_(TEST_EVENTS), _R.source_id.is_not(None))
        .group_by(_R.source_id)
    ).all()
    return {int(source_id): at for source_id, at in rows}


def _silent_sources(conn: Connection, now: datetime) -> dict[tuple[str, str], str]:
    assigned = assignments(conn)
    if not assigned:
        return {}
    days = get_compliance_settings(conn).silence_days
    audio_names = dict(conn.execute(select(audio_sources.c.id, audio_sources.c.name)).all())
    polls = {
        row.id: row
        for row in conn.execute(
            select(
                poll_sources.c.id,
                poll_sources.c.name,
                poll_sources.c.last_rwt_at,
                poll_sources.c.last_rmt_at,
            )
        ).all()
    }
    audio_tests = last_audio_tests(conn)
    silent: dict[tuple[str, str], str] = {}
    for source, assigned_at in assigned.items():
        kind, number = source.split(":")
        source_id = int(number)
        if kind == "audio":
            if source_id not in audio_names:
                continue
            name, last = audio_names[source_id], audio_tests.get(source_id)
        else:
            poll = polls.get(source_id)
            if poll is None:
                continue
            name = poll.name
            last = max((t for t in (poll.last_rwt_at, poll.last_rmt_at) if t), default=None)
        since = max(t for t in (last, assigned_at) if t is not None)
        if now - since > timedelta(days=days):
            heard = f"last test {last.isoformat()}" if last else "no test yet"
            silent[(SOURCE_SILENT, source)] = (
                f"{name} delivered neither an RWT nor an RMT in {days} days ({heard})"
            )
    return silent


def _unaired_rmts(conn: Connection, now: datetime) -> dict[tuple[str, str], str]:
    rows = conn.execute(
        select(rmt_deadlines).where(_D.aired_at.is_(None), _D.started_at <= now - RMT_ALARM_AFTER)
    ).all()
    unaired: dict[tuple[str, str], str] = {}
    for row in rows:
        if now >= _valid_until(row):
            continue
        minutes = int((now - row.started_at).total_seconds() // 60)
        unaired[(RMT_UNAIRED, f"rmt:{row.id}")] = (
            f"RMT received {minutes} minutes ago is not aired (due {row.due_at.isoformat()}): "
            f"{row.header}"
        )
    return unaired


def _valid_until(row: Any) -> datetime:
    """Return when a deadline's message stops being relayable (received + purge; at least due)."""
    try:
        purge = SameHeader.parse(row.header).purge
    except ValueError:
        purge = timedelta(0)
    return max(row.started_at + purge, row.due_at)


def last_own_tests(conn: Connection) -> dict[str, Any]:
    """Return the station's last aired RWT, RMT and NPT: event → (started_at, header)."""
    event = func.substr(_A.header, 10, 3)
    rows = conn.execute(
        select(event, func.max(_Q.started_at))
        .join(eas_archive, _A.id == _Q.archive_id)
        .where(_Q.state == AIRED, event.in_(OWN_TEST_EVENTS))
        .group_by(event)
    ).all()
    return {code: at for code, at in rows}


def _station_tests(conn: Connection, now: datetime) -> dict[tuple[str, str], str]:
    last = max(last_own_tests(conn).values(), default=None)
    if last is not None and now - last <= OWN_TEST_PERIOD:
        return {}
    heard = f"last aired {last.isoformat()}" if last else "none aired yet"
    return {
        (STATION_TEST, STATION): (
            f"the station aired neither an RWT nor an RMT in the last 7 days ({heard})"
        )
    }
