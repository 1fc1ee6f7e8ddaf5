"""Auto-forward end to end: real CAP chains through the import, the forward queue, the air.

Every test runs on SQLite and PostgreSQL (``station`` fixture) with the station's controllable
clock; alerts are CAP 1.2 documents imported as the poller does.
"""

from __future__ import annotations

import logging
import shutil
import threading
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import eas_forward_queue
from alertstation.app import build_station
from alertstation.db.engine import begin_write
from alertstation.eas import voice
from alertstation.eas.audio import read_wav, render_message
from alertstation.eas.decode import decode_pcm
from alertstation.eas.forward import service as forward
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.eas.forward.service import process_queue
from alertstation.same import SameHeader
from tests.eas.test_forward_support import (
    airings,
    archived,
    audit_rows,
    cap_message,
    configure,
    ingest,
    later,
    queue_states,
    vtec,
    wav_path,
)
from tests.support import StationHarness, pg_required


def require_espeak() -> None:
    """Skip without espeak-ng, or fail where the test dependencies must be installed."""
    if shutil.which("espeak-ng") is None:
        if pg_required():
            pytest.fail("espeak-ng is required: run scripts/install-test-deps.sh")
        pytest.skip("espeak-ng is not installed")


def tornado(station: StationHarness, identifier: str = "tor-new", **overrides: Any) -> bytes:
    """Return a NEW Tornado Warning sent now that expires in 70 minutes."""
    now = station.clock.now
    expires = overrides.pop("expires", later(now, minutes=70))
    values: dict[str, Any] = {
        "expires": expires,
        "vtec_strings": [vtec("NEW", 12, now, expires or later(now, hours=1))],
    }
    values.update(overrides)
    return cap_message(identifier, now, **values)


def test_a_tornado_warning_airs_limited_to_the_area(station: StationHarness) -> None:
    st = station.app.station
    configure(st, zone_codes=("040109", "040027"), station_id="wxyz/fm")
    data = tornado(
        station,
        same=("040017", "040027", "040087", "040109"),
        ugc=("OKC017", "OKC027", "OKC087", "OKC109"),
    )
    assert ingest(st, data, station.clock.now).queued
    station.clock.advance(seconds=5)

    (outcome,) = process_queue(st)

    assert outcome.outcome == "aired", outcome
    (row,) = archived(station.engine)
    assert row.id == outcome.message_id and row.aired_by == "auto-forward"
    header = SameHeader.parse(row.header)
    assert (header.org, header.event) == ("WXR", "TOR")
    assert header.locations == ("040027", "040109")  # the area's two counties, not all four
    assert header.purge == timedelta(hours=1, minutes=30)  # 70 min rounded up to a legal step
    assert header.station == "WXYZ/FM "
    now = station.clock.now
    assert header.issued == (now.timetuple().tm_yday, now.hour, now.minute)
    assert queue_states(station.engine) == {"tor-new": ("taken", "")}
    (record,) = airings(station.engine)
    assert (record.message_id, record.header, record.voice) == (row.id, row.header, "none")
    (audit,) = audit_rows(station.engine, "eas.broadcast")
    assert audit.username == "auto-forward" and audit.user_id is None
    assert audit.target == f"eas_forward:{outcome.queue_id}"
    assert row.header in audit.details


def test_the_aired_audio_decodes_to_the_header(station: StationHarness) -> None:
    st = station.app.station
    configure(st, attention_seconds=8.0)
    ingest(st, tornado(station), station.clock.now)
    (outcome,) = process_queue(st)
    (row,) = archived(station.engine)
    audio = read_wav(wav_path(st, row))
    decoded = decode_pcm(audio.samples, audio.sample_rate)
    assert [d.text for d in decoded if d.kind == "header"] == [outcome.detail]
    assert [d.kind for d in decoded].count("eom") == 1  # one valid EOM (three bursts)
    assert outcome.detail == row.header


def test_a_cancellation_never_airs(station: StationHarness) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    ingest(st, tornado(station), now)
    cancel = cap_message(
        "tor-can",
        later(now, minutes=2),
        expires=later(now, minutes=70),
        msg_type="Cancel",
        vtec_strings=[vtec("CAN", 12, now, later(now, minutes=70))],
        refs=[("tor-new", now)],
        headline="The Tornado Warning has been cancelled.",
    )
    result = ingest(st, cancel, later(now, minutes=2))
    assert result.state == "cancelled" and not result.queued
    station.clock.advance(minutes=2)
    assert process_queue(st) == []
    assert archived(station.engine) == []
    assert queue_states(station.engine) == {"tor-new": ("skipped", "event ended before it aired")}

    # Had the store's skip been lost (the entry still pending), the airing guard refuses too.
    with begin_write(station.engine) as conn:
        conn.execute(update(eas_forward_queue).values(state="pending", reason=""))
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail) == ("skipped", "alert is cancelled")
    assert archived(station.engine) == []


def test_a_cancellation_that_arrives_while_rendering_stops_the_air(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    ingest(st, tornado(station), now)
    cancel = cap_message(
        "tor-can",
        later(now, minutes=1),
        expires=later(now, minutes=70),
        msg_type="Cancel",
        vtec_strings=[vtec("CAN", 12, now, later(now, minutes=70))],
        refs=[("tor-new", now)],
    )
    real_render = forward.render_message

    def render_while_the_cancel_lands(*args: Any, **kwargs: Any) -> Any:
        ingest(st, cancel, later(now, minutes=1))  # the entry is taken: the store cannot skip it
        return real_render(*args, **kwargs)

    monkeypatch.setattr(forward, "render_message", render_while_the_cancel_lands)
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail) == ("skipped", "alert is cancelled")
    assert archived(station.engine) == []
    assert audit_rows(station.engine, "eas.broadcast") == []
    (record,) = airings(station.engine)
    assert record.message_id is None and record.error == "not aired: alert is cancelled"
    assert queue_states(station.engine)["tor-new"] == ("skipped", "alert is cancelled")


def test_an_expired_alert_is_skipped_even_before_the_sweep(station: StationHarness) -> None:
    st = station.app.station
    configure(st)
    ingest(st, tornado(station, expires=later(station.clock.now, minutes=10)), station.clock.now)
    station.clock.advance(minutes=10, seconds=1)
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail) == ("skipped", "alert has expired")
    assert archived(station.engine) == []


def test_an_entry_that_waited_too_long_is_skipped(station: StationHarness) -> None:
    st = station.app.station
    configure(st, max_age_minutes=30)
    ingest(st, tornado(station, expires=later(station.clock.now, hours=3)), station.clock.now)
    station.clock.advance(minutes=31)
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail) == (
        "skipped",
        "waited longer than 30 min in the queue",
    )


def test_a_new_superseded_by_a_con_still_airs(station: StationHarness) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    end = later(now, minutes=70)
    ingest(st, tornado(station), now)
    con = cap_message(
        "tor-con",
        later(now, minutes=1),
        expires=end,
        msg_type="Update",
        vtec_strings=[vtec("CON", 12, now, end)],
        refs=[("tor-new", now)],
    )
    assert not ingest(st, con, later(now, minutes=1)).queued
    station.clock.advance(minutes=1)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "aired" and outcome.identifier == "tor-new"
    assert SameHeader.parse(outcome.detail).event == "TOR"


def test_an_upgrade_airs_the_new_event_although_the_old_chain_ended(
    station: StationHarness,
) -> None:
    st = station.app.station
    configure(st, forward_events=("TOR",))
    now = station.clock.now
    end = later(now, hours=2)
    watch = cap_message(
        "toa",
        now,
        expires=end,
        event_code="TOA",
        event="Tornado Watch",
        vtec_strings=[vtec("NEW", 100, now, end, sig="A")],
    )
    ingest(st, watch, now)  # queued for the rules; no rule airs TOA here
    upgrade = cap_message(
        "tor-upg",
        later(now, minutes=5),
        expires=later(now, minutes=50),
        msg_type="Update",
        refs=[("toa", now)],
        vtec_strings=[
            vtec("UPG", 100, now, end, sig="A"),
            vtec("NEW", 7, now, later(now, minutes=50)),
        ],
    )
    assert ingest(st, upgrade, later(now, minutes=5)).queued
    station.clock.advance(minutes=5)
    (outcome,) = [o for o in process_queue(st) if o.identifier == "tor-upg"]
    assert outcome.outcome == "aired"
    assert SameHeader.parse(outcome.detail).purge == timedelta(minutes=45)


def test_area_and_event_changes_after_queueing_are_honoured(station: StationHarness) -> None:
    st = station.app.station
    now = station.clock.now
    configure(st)
    ingest(st, tornado(station, "a"), station.clock.now)
    ingest(st, tornado(station, "b", vtec_strings=[]), station.clock.now)
    with begin_write(station.engine) as conn:
        save_rule_book(conn, {"rules": [{"events": ["SVR"], "mode": "auto"}]}, by="t", now=now)
    (first,) = process_queue(st, limit=1)
    assert (first.identifier, first.outcome) == ("a", "awaiting")
    assert first.detail.startswith("manual by default: pending ")
    with begin_write(station.engine) as conn:
        save_rule_book(conn, {"rules": [{"events": ["TOR"], "mode": "auto"}]}, by="t", now=now)
        set_alert_settings(conn, zone_codes=["040027"])
    (second,) = process_queue(st)
    assert (second.identifier, second.detail) == ("b", "outside the broadcast area")
    assert archived(station.engine) == []


def test_with_no_rule_matching_the_default_waits_for_approval(station: StationHarness) -> None:
    st = station.app.station
    configure(st, forward_events=())
    ingest(st, tornado(station), station.clock.now)
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail[:18]) == ("awaiting", "manual by default:")
    assert archived(station.engine) == []
    assert process_queue(st) == []


def test_an_alert_without_a_same_code_in_the_area_is_skipped(station: StationHarness) -> None:
    st = station.app.station
    configure(st, zone_codes=("LEZ142",))  # a Lake Erie zone: no SAME county to name
    ingest(st, tornado(station, same=("039043",), ugc=("LEZ142",)), station.clock.now)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "skipped"
    assert outcome.detail == (
        "cannot translate to SAME: none of the alert's SAME location codes lies in the "
        "broadcast area"
    )


def test_zone_configured_area_names_the_counties_of_its_state(station: StationHarness) -> None:
    st = station.app.station
    configure(st, zone_codes=("OKZ025",))
    data = tornado(station, same=("040109", "048485"), ugc=("OKZ025", "TXZ086"))
    ingest(st, data, station.clock.now)
    (outcome,) = process_queue(st)
    assert SameHeader.parse(outcome.detail).locations == ("040109",)
    (record,) = airings(station.engine)
    assert record.note == "1 code(s) chosen by the state of UGC zones"


def test_purge_without_expiry_and_past_the_legal_maximum(station: StationHarness) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    ingest(st, tornado(station, "open", expires=None), now)
    ingest(
        st,
        tornado(
            station,
            "long",
            expires=later(now, days=6),
            vtec_strings=[vtec("NEW", 13, now, later(now, days=6))],
        ),
        now,
    )
    purges = {o.identifier: SameHeader.parse(o.detail).purge_code for o in process_queue(st)}
    assert purges == {"open": "0100", "long": "9930"}


def test_two_workers_never_air_one_entry_twice(station: StationHarness) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    for etn in range(1, 5):
        data = tornado(
            station, f"tor-{etn}", vtec_strings=[vtec("NEW", etn, now, later(now, hours=1))]
        )
        ingest(st, data, now)
    workers = [build_station(st.settings, station.engine, station.clock) for _ in range(2)]
    barrier = threading.Barrier(2)
    results: dict[str, list[Any]] = {}

    def work(name: str, worker_station: Any) -> None:
        barrier.wait()
        results[name] = process_queue(worker_station, worker=name)

    threads = [threading.Thread(target=work, args=(f"w{i}", s)) for i, s in enumerate(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    aired = [o.queue_id for outcomes in results.values() for o in outcomes]
    assert sorted(aired) == sorted(set(aired)) and len(aired) == 4
    assert len(archived(station.engine)) == 4
    assert {r.queue_id for r in airings(station.engine)} == set(aired)
    assert all(o.outcome == "aired" for outcomes in results.values() for o in outcomes)
    assert process_queue(st) == []


def test_voice_from_headline_and_description(station: StationHarness) -> None:
    require_espeak()
    st = station.app.station
    configure(st, include_voice=True)
    ingest(st, tornado(station), station.clock.now)
    (outcome,) = process_queue(st)
    (row,) = archived(station.engine)
    (record,) = airings(station.engine)
    assert record.voice == "spoken"
    silent = render_message(outcome.detail, sample_rate=row.sample_rate, attention_seconds=8.0)
    assert row.duration - silent.size / row.sample_rate > 2.0  # the spoken text is in there
    audio = read_wav(wav_path(st, row))
    headers = [d.text for d in decode_pcm(audio.samples, audio.sample_rate) if d.kind == "header"]
    assert headers == [row.header]


def test_without_speech_the_alert_airs_without_voice(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    st = station.app.station
    configure(st, include_voice=True)
    monkeypatch.setattr(voice, "espeak_path", lambda: None)
    ingest(st, tornado(station), station.clock.now)
    with caplog.at_level(logging.WARNING, logger="alertstation.eas"):
        (outcome,) = process_queue(st)
    assert outcome.outcome == "aired"
    (record,) = airings(station.engine)
    assert record.voice == "unavailable"
    assert any("airs without voice" in r.getMessage() for r in caplog.records)


def test_a_failed_airing_is_recorded_and_not_retried(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = station.app.station
    configure(st)
    ingest(st, tornado(station), station.clock.now)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(forward.broadcast, "broadcast", broken)
    (outcome,) = process_queue(st)
    assert (outcome.outcome, outcome.detail) == ("failed", "airing failed: disk full")
    assert queue_states(station.engine)["tor-new"] == ("failed", "airing failed: disk full")
    assert process_queue(st) == []
    assert audit_rows(station.engine, "eas.broadcast") == []


def test_forward_job_logs_each_outcome(
    station: StationHarness, caplog: pytest.LogCaptureFixture
) -> None:
    st = station.app.station
    configure(st)
    ingest(st, tornado(station), station.clock.now)
    with caplog.at_level(logging.INFO, logger="alertstation.eas"):
        forward.forward_job(st)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("auto-forward:")]
    assert len(lines) == 1 and " tor-new TOR aired: ZCZC-WXR-TOR-040109+" in lines[0]


def test_a_render_that_fails_marks_the_entry_failed(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = station.app.station
    configure(st)
    ingest(st, tornado(station), station.clock.now)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("voice: lasts 130.0 s; the limit is 120 s")

    monkeypatch.setattr(forward, "render_message", broken)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "failed"
    assert outcome.detail == "rendering failed: voice: lasts 130.0 s; the limit is 120 s"
    assert queue_states(station.engine)["tor-new"][0] == "failed"
    assert archived(station.engine) == []


def test_a_partial_cancel_before_airing_airs_the_codes_still_in_force(
    station: StationHarness,
) -> None:
    """A Tornado Warning for two counties of the area, cancelled for one before it aired: the
    header names only the county still warned; cancelled for both, nothing airs."""
    st = station.app.station
    configure(st, zone_codes=("040109", "040017"))
    now = station.clock.now
    end = later(now, minutes=70)
    both = {"same": ("040017", "040109"), "ugc": ("OKC017", "OKC109")}
    new = cap_message("tor-2", now, expires=end, vtec_strings=[vtec("NEW", 31, now, end)], **both)
    assert ingest(st, new, now).queued
    can = cap_message(
        "tor-2-can", later(now, minutes=1), expires=end, msg_type="Update",
        vtec_strings=[vtec("CAN", 31, now, end)], same=("040017",), ugc=("OKC017",),
    )  # fmt: skip
    ingest(st, can, later(now, minutes=1))
    station.clock.advance(minutes=1)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "aired" and outcome.identifier == "tor-2"
    assert SameHeader.parse(outcome.detail).locations == ("040109",)


def test_a_cancel_of_the_area_before_airing_drops_the_forward(station: StationHarness) -> None:
    st = station.app.station
    configure(st, zone_codes=("040017",))
    now = station.clock.now
    end = later(now, minutes=70)
    both = {"same": ("040017", "040109"), "ugc": ("OKC017", "OKC109")}
    new = cap_message("tor-3", now, expires=end, vtec_strings=[vtec("NEW", 32, now, end)], **both)
    assert ingest(st, new, now).queued
    can = cap_message(
        "tor-3-can", later(now, minutes=1), expires=end, msg_type="Update",
        vtec_strings=[vtec("CAN", 32, now, end)], same=("040017",), ugc=("OKC017",),
    )  # fmt: skip
    ingest(st, can, later(now, minutes=1))
    station.clock.advance(minutes=1)
    (outcome,) = process_queue(st)
    assert outcome.outcome == "skipped"
    assert outcome.detail.startswith("none of the broadcast area's codes remain in force")
