"""Monitoring compliance as the station sees it: the job that keeps alarms, and the overview.

:func:`compliance_job` is the worker's job (``eas-compliance``): one write transaction per
round, at the station's clock. :func:`overview` is what ``/eas/compliance`` and its API show:
per source the last RWT and RMT received and relayed, the station's own tests, the RMT
deadlines and the open alarms.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import Connection, select

from alertstation.alerts.poll.tables import poll_sources
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.log import record_entry
from alertstation.eas.log.record import NOTE
from alertstation.eas.tables import eas_archive
from alertstation.notifications import notify
from alertstation.notifications.events import COMPLIANCE_ALARM
from alertstation.operations.compliance.alarms import (
    ALARM_NAMES,
    OWN_TEST_PERIOD,
    STATION,
    TEST_EVENTS,
    Evaluation,
    evaluate,
    last_own_tests,
    open_alarms,
)
from alertstation.operations.compliance.deadlines import AIRED, recent_deadlines
from alertstation.operations.compliance.settings import assignments, get_compliance_settings
from alertstation.same import SameHeader, message_key
from alertstation.worker.jobs import Job

log = logging.getLogger("alertstation.operations.compliance")

#: How often the worker evaluates the alarms (seconds).
INTERVAL: Final[float] = 60.0
#: How far back the overview looks for a source's received and relayed tests.
HISTORY: Final[timedelta] = timedelta(days=62)

_R = received_eas_messages.c
_Q = eas_airing_queue.c
_A = eas_archive.c


def run_compliance(station: Station) -> Evaluation:
    """Evaluate the alarms and deadlines once at the station's clock; return what changed."""
    with begin_write(station.engine) as conn:
        now = station.clock()
        result = evaluate(conn, now)
        _tell(conn, result, now)
    for line in result.lines():
        log.warning("%s", line)
    return result


def _tell(conn: Connection, result: Evaluation, now: datetime) -> None:
    """Notify each alarm raised, and log whether each RMT deadline was met, in the round's
    transaction: the alarm rows, their notifications and the log entries land together."""
    for alarm in result.raised:
        link = (
            f"\nRecord the reason: {alarm['record_reason_url']}"
            if alarm["record_reason_url"]
            else ""
        )
        notify(
            conn,
            COMPLIANCE_ALARM,
            subject=f"Compliance alarm: {ALARM_NAMES[alarm['kind']]}",
            body=f"{alarm['detail']} ({alarm['source']}){link}",
            now=now,
            dedupe_key=f"compliance-alarm:{alarm['id']}",
        )
    for deadline in result.deadlines:
        record_entry(
            conn,
            NOTE,
            at=now,
            source=STATION,
            header=deadline.header,
            result="RMT deadline met" if deadline.met else "RMT deadline missed",
            by=STATION,
            details={"rmt_deadline": deadline.as_dict()},
        )


def compliance_job(station: Station) -> None:
    """The worker job: :func:`run_compliance`."""
    run_compliance(station)


#: The worker's job (listed in ``operations.jobs.STATION_JOBS``).
COMPLIANCE_JOB: Final[Job] = Job("eas-compliance", INTERVAL, compliance_job)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _aired_tests(conn: Connection, since: datetime) -> dict[str, datetime]:
    """Return message key → first airing start of the station's aired RWT/RMT since ``since``."""
    rows = conn.execute(
        select(_A.header, _Q.started_at)
        .join(eas_archive, _A.id == _Q.archive_id)
        .where(_Q.state == AIRED, _Q.started_at >= since)
        .order_by(_Q.started_at)
    ).all()
    aired: dict[str, datetime] = {}
    for header, started_at in rows:
        try:
            parsed = SameHeader.parse(header)
        except ValueError:
            continue
        if parsed.event in TEST_EVENTS:
            aired.setdefault(message_key(parsed), started_at)
    return aired


def _audio_tests(conn: Connection, since: datetime) -> dict[int, list[Any]]:
    rows = conn.execute(
        select(_R.source_id, _R.header, _R.event_code, _R.received_at)
        .where(_R.event_code.in_(TEST_EVENTS), _R.received_at >= since, _R.source_id.is_not(None))
        .order_by(_R.received_at.desc())
    ).all()
    by_source: dict[int, list[Any]] = {}
    for row in rows:
        by_source.setdefault(int(row.source_id), []).append(row)
    return by_source


def _audio_entry(rows: list[Any], aired: dict[str, datetime]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for event in TEST_EVENTS:
        name = event.lower()
        mine = [row for row in rows if row.event_code == event]
        received = mine[0] if mine else None
        relayed = None
        for row in mine:
            try:
                at = aired.get(message_key(SameHeader.parse(row.header)))
            except ValueError:
                continue
            if at is not None:
                relayed = (row.header, at)
                break
        entry[f"last_{name}_received"] = (
            {"at": received.received_at.isoformat(), "header": received.header}
            if received
            else None
        )
        entry[f"last_{name}_relayed"] = (
            {"at": relayed[1].isoformat(), "header": relayed[0]} if relayed else None
        )
    return entry


def overview(conn: Connection, now: datetime) -> dict[str, Any]:
    """Return the compliance overview (the page's and the API's content)."""
    settings = get_compliance_settings(conn)
    assigned = assignments(conn)
    since = now - HISTORY
    aired = _aired_tests(conn, since)
    audio_tests = _audio_tests(conn, since)
    sources: list[dict[str, Any]] = []
    for row in conn.execute(
        select(audio_sources.c.id, audio_sources.c.name).order_by(audio_sources.c.name)
    ).all():
        key = f"audio:{row.id}"
        sources.append(
            {
                "source": key,
                "name": row.name,
                "kind": "audio",
                "assigned": key in assigned,
                "assigned_at": _iso(assigned.get(key)),
                **_audio_entry(audio_tests.get(row.id, []), aired),
            }
        )
    for row in conn.execute(
        select(
            poll_sources.c.id,
            poll_sources.c.name,
            poll_sources.c.last_rwt_at,
            poll_sources.c.last_rmt_at,
        ).order_by(poll_sources.c.name)
    ).all():
        key = f"poll:{row.id}"
        sources.append(
            {
                "source": key,
                "name": row.name,
                "kind": "poll",
                "assigned": key in assigned,
                "assigned_at": _iso(assigned.get(key)),
                "last_rwt_received": {"at": row.last_rwt_at.isoformat(), "header": None}
                if row.last_rwt_at
                else None,
                "last_rmt_received": {"at": row.last_rmt_at.isoformat(), "header": None}
                if row.last_rmt_at
                else None,
                "last_rwt_relayed": None,
                "last_rmt_relayed": None,
            }
        )
    own = last_own_tests(conn)
    last_any = max(own.values(), default=None)
    return {
        "settings": settings.as_dict(),
        "sources": sources,
        "station_tests": {
            "last_rwt_aired": _iso(own.get("RWT")),
            "last_rmt_aired": _iso(own.get("RMT")),
            "last_npt_aired": _iso(own.get("NPT")),
            "next_due": _iso(last_any + OWN_TEST_PERIOD) if last_any else None,
            "ok": last_any is not None and now - last_any <= OWN_TEST_PERIOD,
        },
        "rmt_deadlines": recent_deadlines(conn),
        "alarms": open_alarms(conn),
    }
