"""The Required Weekly Test: slots across weekdays, time zones and DST; airing once per slot."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from alertstation.app import build_station
from alertstation.db.engine import begin_write
from alertstation.eas.audio import read_wav
from alertstation.eas.decode import decode_pcm
from alertstation.eas.forward import rwt
from alertstation.eas.forward.rwt import (
    RwtSchedule,
    get_schedule,
    next_slot_after,
    run_schedule,
    save_schedule,
    slot_at_or_before,
    upcoming,
)
from alertstation.same import SameHeader
from tests.eas.test_forward_support import archived, audit_rows, wav_path
from tests.support import StationHarness

NEW_YORK = "America/New_York"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# --- slots (pure) ---------------------------------------------------------------------------


def test_slots_on_the_scheduled_weekday_and_time() -> None:
    wednesday_11 = RwtSchedule(weekday=2, time_of_day="11:00")
    before = utc(2026, 11, 18, 10, 59)  # a Wednesday
    assert next_slot_after(wednesday_11, before) == utc(2026, 11, 18, 11, 0)
    assert slot_at_or_before(wednesday_11, before) == utc(2026, 11, 11, 11, 0)
    on_time = utc(2026, 11, 18, 11, 0)
    assert slot_at_or_before(wednesday_11, on_time) == on_time
    assert next_slot_after(wednesday_11, on_time) == utc(2026, 11, 25, 11, 0)
    sunday = utc(2026, 11, 22, 8, 0)
    assert next_slot_after(wednesday_11, sunday) == utc(2026, 11, 25, 11, 0)
    assert slot_at_or_before(wednesday_11, sunday) == utc(2026, 11, 18, 11, 0)


@pytest.mark.parametrize(
    ("zone", "weekday", "local", "now", "expected"),
    [
        ("America/Chicago", 2, "11:00", utc(2026, 11, 18, 16, 0), utc(2026, 11, 18, 17, 0)),
        # Wednesday 09:00 in Auckland (UTC+13 in November) is Tuesday 20:00 UTC.
        ("Pacific/Auckland", 2, "09:00", utc(2026, 11, 17, 12, 0), utc(2026, 11, 17, 20, 0)),
        # Monday 23:30 in Honolulu (UTC-10) is Tuesday 09:30 UTC.
        ("Pacific/Honolulu", 0, "23:30", utc(2026, 11, 17, 9, 0), utc(2026, 11, 17, 9, 30)),
        ("Asia/Kolkata", 4, "10:15", utc(2026, 11, 20, 4, 45), utc(2026, 11, 27, 4, 45)),
    ],
)
def test_slots_in_other_time_zones(
    zone: str, weekday: int, local: str, now: datetime, expected: datetime
) -> None:
    schedule = RwtSchedule(weekday=weekday, time_of_day=local, time_zone=zone)
    slot = next_slot_after(schedule, now)
    assert slot == expected
    seen = slot.astimezone(ZoneInfo(zone))
    assert (seen.weekday(), seen.strftime("%H:%M")) == (weekday, local)
    assert slot_at_or_before(schedule, slot) == slot


def _slots(schedule: RwtSchedule, start: datetime, count: int) -> list[datetime]:
    found, now = [], start
    for _ in range(count):
        now = next_slot_after(schedule, now)
        found.append(now)
    return found


def test_slots_across_the_spring_forward() -> None:
    # 2026-03-08 is the US spring-forward Sunday: 02:30 does not exist in New York.
    schedule = RwtSchedule(weekday=6, time_of_day="02:30", time_zone=NEW_YORK)
    slots = _slots(schedule, utc(2026, 2, 27), 3)
    assert slots == [utc(2026, 3, 1, 7, 30), utc(2026, 3, 8, 7, 30), utc(2026, 3, 15, 6, 30)]
    local = [s.astimezone(ZoneInfo(NEW_YORK)).strftime("%a %H:%M %Z") for s in slots]
    assert local == ["Sun 02:30 EST", "Sun 03:30 EDT", "Sun 02:30 EDT"]


def test_slots_across_the_fall_back() -> None:
    # 2026-11-01 is the US fall-back Sunday: 01:30 happens twice; the first one airs.
    schedule = RwtSchedule(weekday=6, time_of_day="01:30", time_zone=NEW_YORK)
    slots = _slots(schedule, utc(2026, 10, 24), 3)
    assert slots == [utc(2026, 10, 25, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 8, 6, 30)]
    # After the second 01:30 the day's slot is still the first one: no second airing.
    after_second = utc(2026, 11, 1, 6, 35)  # 01:35 EST
    assert slot_at_or_before(schedule, after_second) == utc(2026, 11, 1, 5, 30)
    assert next_slot_after(schedule, after_second) == utc(2026, 11, 8, 6, 30)


def test_upcoming_shows_a_due_slot_until_it_aired() -> None:
    schedule = RwtSchedule(enabled=True, weekday=2, time_of_day="11:00")
    slot = utc(2026, 11, 18, 11, 0)
    assert upcoming(schedule, slot - timedelta(days=7), slot + timedelta(minutes=1)) == slot
    assert upcoming(schedule, slot, slot + timedelta(minutes=1)) == slot + timedelta(days=7)
    assert upcoming(RwtSchedule(), None, slot) is None


# --- the job (both backends) ------------------------------------------------------------------


def schedule_for(station: StationHarness, minutes: int = 10, **values: Any) -> RwtSchedule:
    """Schedule the weekly test ``minutes`` after the test clock's time (on a whole minute)."""
    station.clock.now = station.clock.now.replace(second=0)
    slot = station.clock.now + timedelta(minutes=minutes)
    body = {
        "enabled": True,
        "weekday": slot.strftime("%A"),
        "time_of_day": slot.strftime("%H:%M"),
        "location_codes": "040109 040027",
        "station_id": "KXYZ",
        **values,
    }
    with begin_write(station.engine) as conn:
        schedule, _ = save_schedule(conn, body, by="test", now=station.clock.now)
    return schedule


def test_a_due_slot_airs_once(station: StationHarness) -> None:
    st = station.app.station
    schedule_for(station)
    assert run_schedule(st) == "waiting"
    station.clock.advance(minutes=10)
    assert run_schedule(st) == "aired"
    assert run_schedule(st) == "waiting"
    assert run_schedule(build_station(st.settings, station.engine, station.clock)) == "waiting"
    (row,) = archived(station.engine)
    header = SameHeader.parse(row.header)
    assert (header.org, header.event, header.locations) == ("EAS", "RWT", ("040109", "040027"))
    assert (header.purge_code, header.station_id) == ("0015", "KXYZ")
    assert row.aired_by == "rwt-schedule"
    audio = read_wav(wav_path(st, row))
    decoded = decode_pcm(audio.samples, audio.sample_rate)
    assert [d.text for d in decoded if d.kind == "header"] == [row.header]
    # No attention signal: the last header burst ends a second before the first EOM (no voice).
    last_header = next(d for d in decoded if d.kind == "header")
    first_eom = next(d for d in decoded if d.kind == "eom")
    assert (first_eom.start_sample - last_header.end_sample) / audio.sample_rate < 3.0
    (audit,) = audit_rows(station.engine, "eas.broadcast")
    assert (audit.username, audit.target) == ("rwt-schedule", "eas_rwt:schedule")
    with station.engine.connect() as conn:
        assert get_schedule(conn)[1] == station.clock.now


def test_the_clock_going_back_and_forth_never_airs_twice(station: StationHarness) -> None:
    st = station.app.station
    schedule_for(station)
    station.clock.advance(minutes=11)
    assert run_schedule(st) == "aired"
    station.clock.advance(hours=-2)
    assert run_schedule(st) == "waiting"
    station.clock.advance(hours=2, minutes=1)
    assert run_schedule(st) == "waiting"
    station.clock.advance(days=7)
    assert run_schedule(st) == "aired"
    assert len(archived(station.engine)) == 2


def test_a_slot_found_too_late_is_passed_over(
    station: StationHarness, caplog: pytest.LogCaptureFixture
) -> None:
    st = station.app.station
    schedule_for(station)
    station.clock.advance(minutes=10 + 16)  # 16 minutes late: the station was down
    with caplog.at_level(logging.WARNING, logger="alertstation.eas"):
        assert run_schedule(st) == "missed"
    assert any("passed over" in r.getMessage() for r in caplog.records)
    assert run_schedule(st) == "waiting"
    assert archived(station.engine) == []
    station.clock.advance(days=7, minutes=-16)  # the next slot, on time
    assert run_schedule(st) == "aired"


def test_a_failed_airing_is_tried_again_within_the_grace(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = station.app.station
    schedule_for(station)
    station.clock.advance(minutes=10)
    real = rwt.broadcast.broadcast
    calls: list[int] = []

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("output folder unavailable")
        return real(*args, **kwargs)

    monkeypatch.setattr(rwt.broadcast, "broadcast", fails_once)
    assert run_schedule(st) == "failed"
    station.clock.advance(seconds=30)
    assert run_schedule(st) == "aired"
    assert len(archived(station.engine)) == 1


def test_changing_the_schedule_never_airs_a_past_slot(station: StationHarness) -> None:
    st = station.app.station
    schedule_for(station, minutes=-5)  # five minutes ago today
    assert run_schedule(st) == "waiting"
    schedule_for(station, minutes=10)
    station.clock.advance(minutes=10)
    assert run_schedule(st) == "aired"
    schedule_for(station, minutes=-5)  # moved before the slot that just aired
    station.clock.advance(minutes=1)
    assert run_schedule(st) == "waiting"
    assert len(archived(station.engine)) == 1


def test_an_off_schedule_airs_nothing(station: StationHarness) -> None:
    st = station.app.station
    schedule_for(station, enabled=False)
    station.clock.advance(minutes=10)
    assert run_schedule(st) == "off"
    assert archived(station.engine) == []
