"""The EAS station log: entries written in the transaction of their event (received, refused,
airings' ends with per-output results, Stop, Remove, approval-queue decisions), read by month in
the station's time zone, and notes, corrections and reviews (audited; eas.broadcast).

Both backends, the station's injected clock.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson
import pytest
from sqlalchemy import Connection, select

from alertstation.audio.received import store_refused
from alertstation.audio.same_monitor import SameMonitor
from alertstation.audio.tables import audio_sources, received_eas_refused
from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair
from alertstation.eas.airing import queue as airing
from alertstation.eas.forward import pending
from alertstation.eas.forward import service as forward
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.forward.rules import Decision, Mode
from alertstation.eas.log import record_entry
from alertstation.eas.log.service import LogFilter, list_entries, parse_month
from alertstation.eas.log.tables import eas_log
from alertstation.same import SameHeader
from alertstation.settings_admin import sections
from tests.eas.airing_support import queue_message
from tests.eas.test_airing_truth import long_message
from tests.eas.test_forward_pending import HOLD_2, tornado
from tests.eas.test_forward_support import configure, ingest
from tests.support import StationHarness

TOR = "ZCZC-WXR-TOR-039137+0030-3251200-WXYZ/FM -"
RWT = "ZCZC-EAS-RWT-039137+0015-3251200-WXYZ/FM -"


def entries(engine: Any, **where: Any) -> list[Any]:
    with engine.connect() as conn:
        query = select(eas_log).order_by(eas_log.c.id)
        for name, value in where.items():
            query = query.where(eas_log.c[name] == value)
        return list(conn.execute(query))


def add_sources(station: StationHarness, count: int) -> list[int]:
    """Add ``count`` stream sources; return their ids."""
    now = station.clock.now
    with begin_write(station.engine) as conn:
        return [
            int(
                conn.execute(
                    audio_sources.insert().values(
                        name=f"wxr-{n}",
                        kind="stream",
                        url=f"https://radio.example/wxr{n}",
                        created_at=now,
                        updated_at=now,
                    )
                ).inserted_primary_key[0]
            )
            for n in range(count)
        ]


def set_time_zone(station: StationHarness, name: str) -> None:
    with begin_write(station.engine) as conn:
        sections.save(
            conn, sections.APPLICATION, {"time_zone": name}, updated_by="t", now=station.clock.now
        )


# --- record_entry ------------------------------------------------------------------------------


def test_record_entry_stores_the_plain_text_of_its_moment_and_refuses_bad_input(
    conn: Connection,
) -> None:
    at = datetime(2026, 11, 21, 12, 5, tzinfo=UTC)
    entry_id = record_entry(
        conn, "received", at=at, source="audio:1", header=TOR, result="new", details={"bursts": 3}
    )
    row = conn.execute(select(eas_log).where(eas_log.c.id == entry_id)).one()
    assert (row.kind, row.event_code, row.source, row.result) == (
        "received",
        "TOR",
        "audio:1",
        "new",
    )
    assert row.text.startswith("The National Weather Service has issued a Tornado Warning")
    assert orjson.loads(row.details) == {"bursts": 3}
    with pytest.raises(ValueError, match="kind"):
        record_entry(conn, "deleted", at=at)
    with pytest.raises(ValueError, match="corrects"):
        record_entry(conn, "correction", at=at, text="no entry named")
    with pytest.raises(ValueError, match="corrects"):
        record_entry(conn, "note", at=at, corrects=entry_id)


def test_an_entry_is_rolled_back_with_its_event(station: StationHarness) -> None:
    now = station.clock.now
    (source,) = add_sources(station, 1)
    with pytest.raises(RuntimeError), begin_write(station.engine) as conn:
        store_refused(conn, source, TOR, "originator unknown", now)
        raise RuntimeError("the event's transaction fails")
    with station.engine.connect() as conn:
        assert conn.execute(select(received_eas_refused)).all() == []
    assert entries(station.engine) == []
    with begin_write(station.engine) as conn:
        store_refused(conn, source, TOR, "originator unknown", now)
    (row,) = entries(station.engine)
    assert (row.kind, row.source, row.header) == ("refused", f"audio:{source}", TOR)
    assert orjson.loads(row.details)["reason"] == "originator unknown"


# --- the events that write it ------------------------------------------------------------------


def test_received_headers_are_logged_as_received_test_or_duplicate(
    station: StationHarness,
) -> None:
    one, two = add_sources(station, 2)
    monitor = SameMonitor(station.app.station, 8000, use_saved_settings=False)
    first = monitor.store(one, SameHeader.parse(TOR), 3)
    monitor.store(two, SameHeader.parse(TOR), 2)
    monitor.store(one, SameHeader.parse(RWT), 3)
    rows = entries(station.engine)
    assert [(r.kind, r.source, r.result, r.event_code) for r in rows] == [
        ("received", f"audio:{one}", "new", "TOR"),
        ("received", f"audio:{two}", "duplicate", "TOR"),
        ("test_received", f"audio:{one}", "new", "RWT"),
    ]
    assert orjson.loads(rows[1].details) == {
        "bursts": 2,
        "duplicate_of": first,
        "received_id": first + 1,
    }
    assert all(r.at == station.clock.now for r in rows)
    assert "Required Weekly Test" in rows[2].text


def test_an_airing_is_logged_when_it_ends_with_its_outputs_and_its_text_of_that_moment(
    station: StationHarness,
) -> None:
    st = station.app.station
    queue_message(st, long_message(0.2), origin="manual", aired_by="ops")
    queue_message(st, long_message(0.2), origin="relay", aired_by=None)
    queue_message(st, long_message(0.2), origin="forward", aired_by=None)
    assert entries(station.engine) == []  # queued is not yet logged
    while onair.run_once(st):
        station.clock.advance(seconds=30)
    rows = entries(station.engine)
    assert [(r.kind, r.source, r.result) for r in rows] == [
        ("originated", "manual", "archived_only"),
        ("relayed", "relay", "archived_only"),
        ("forwarded", "forward", "archived_only"),
    ]
    details = orjson.loads(rows[0].details)
    assert [(o["name"], o["ok"]) for o in details["outputs"]] == [("archive", True)]
    assert rows[0].by == "ops" and "3:00 PM" not in rows[0].text
    before = rows[0].text
    set_time_zone(station, "America/New_York")
    assert entries(station.engine)[0].text == before  # a later zone change rewrites nothing


def test_stop_remove_expiry_interruption_and_a_test_sent_are_logged(
    station: StationHarness,
) -> None:
    st = station.app.station
    queue_message(st, long_message(0.2), origin="rwt", aired_by="rwt")
    queue_message(st, long_message(0.2), origin="manual")
    queue_message(st, long_message(0.2), origin="manual")
    first = airing.claim_next(st.engine, station.clock.now)
    assert first is not None
    with begin_write(st.engine) as conn:
        second = conn.execute(
            select(airing.eas_airing_queue.c.id).order_by(airing.eas_airing_queue.c.id.desc())
        ).scalar()
        airing.remove(conn, second, by="ops", now=station.clock.now)
        airing.request_stop(conn, by="chief", now=station.clock.now, clear_queue=True)
    airing.finish(
        st.engine, first.id, state=airing.STOPPED, error=None, outputs={}, now=station.clock.now
    )
    kinds = [(r.kind, r.by, r.result) for r in entries(station.engine)]
    assert kinds == [
        ("removed", "ops", "removed"),
        ("stopped", "chief", "stopped"),
        ("removed", "chief", "removed"),
        ("test_sent", "rwt", "stopped"),
    ]

    queue_message(st, long_message(0.2), origin="manual", aired_by="ops")
    station.clock.advance(minutes=31)  # past the header's +0030 before any worker took it
    assert airing.claim_next(st.engine, station.clock.now) is None
    queue_message(st, long_message(0.2), origin="forward", aired_by=None)
    assert airing.claim_next(st.engine, station.clock.now) is not None
    assert airing.recover_interrupted(st.engine, station.clock.now)  # the worker stopped
    expired, interrupted = entries(station.engine)[-2:]
    assert (expired.kind, expired.result, expired.by) == ("originated", "failed", "ops")
    assert "purge time passed" in orjson.loads(expired.details)["error"]
    assert (interrupted.kind, interrupted.result) == ("forwarded", "interrupted")


def test_approval_queue_decisions_are_logged(station: StationHarness) -> None:
    st = station.app.station
    configure(st, forward_events=())
    with begin_write(st.engine) as conn:
        save_rule_book(conn, HOLD_2, by="chief", now=station.clock.now)
    ingest(st, tornado(station), station.clock.now)
    forward.forward_job(st)
    with st.engine.connect() as conn:
        (item,) = pending.list_open(conn)
    chief = Actor.system("chief")
    pending.act(st, item["id"], "hold", chief)
    pending.act(st, item["id"], "forward", chief)
    forward.forward_job(st)
    rows = entries(station.engine)
    assert [(r.kind, r.source, r.result, r.by) for r in rows[:3]] == [
        ("held", "poll", "hold", None),
        ("held", "poll", "held", "chief"),
        ("approved", "poll", "forwarded", "chief"),
    ]
    assert orjson.loads(rows[0].details)["rule"] == "rule 1"
    assert rows[0].header == item["header"]


def test_an_expired_waiting_message_is_logged_expired(station: StationHarness) -> None:
    st = station.app.station
    now = station.clock.now
    with begin_write(st.engine) as conn:
        pending.park(
            conn,
            origin="relay",
            source="audio:2",
            header=TOR,
            event_code="TOR",
            decision=Decision(Mode("manual"), "default"),
            now=now,
            expires_at=now + timedelta(minutes=1),
        )
    station.clock.advance(minutes=2)
    pending.run_due(st)
    assert [(r.kind, r.result) for r in entries(st.engine)] == [
        ("held", "manual"),
        ("expired", "expired"),
    ]


# --- reading by month ------------------------------------------------------------------------


def test_a_month_is_taken_in_the_station_s_time_zone(conn: Connection) -> None:
    zone = ZoneInfo("America/New_York")
    late = datetime(2026, 12, 1, 3, 30, tzinfo=UTC)  # 30 November, 22:30 EST
    record_entry(conn, "note", at=late, text="late on the last day")
    record_entry(conn, "note", at=datetime(2026, 12, 1, 5, 30, tzinfo=UTC), text="December")
    november = parse_month("2026-11", zone, late)
    assert [e["text"] for e in list_entries(conn, november)] == ["late on the last day"]
    assert parse_month(None, zone, late).label == "2026-11"
    assert list_entries(conn, november, LogFilter(kind="received")) == []
    for bad in ("2026-13", "2026-1", "11-2026", "2026-11-01", "0000-01"):
        with pytest.raises(ValueError, match="month"):
            parse_month(bad, zone, late)


# --- kept: nothing edits or prunes it ----------------------------------------------------------

SOURCE = Path(__file__).resolve().parents[2] / "src" / "alertstation"
EDITS = re.compile(
    r"(?:update|delete)\(\s*eas_log\b|eas_log\s*\.\s*(?:update|delete)\(|"
    r"(?:UPDATE|DELETE\s+FROM)\s+\"?eas_log\b",
    re.IGNORECASE,
)


def test_no_code_updates_deletes_or_prunes_station_log_entries() -> None:
    offenders = [
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if EDITS.search(path.read_text())
    ]
    assert offenders == []
    assert EDITS.search("conn.execute(delete(eas_log).where(x))")  # the check can fail
    assert EDITS.search('text("DELETE FROM eas_log WHERE at < :cutoff")')
