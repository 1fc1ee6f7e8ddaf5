"""The Required Weekly Test: its schedule, when it falls due, and airing one.

The schedule is one row of ``eas_rwt_schedule``: a weekday and a local time, the location codes
(SAME ``PSSCCC``), the station id and an optional voice text. The local time is in the station's
time zone (the application settings' ``time_zone``, :func:`station_time_zone`); the schedule
has no zone of its own. A slot is that weekday and time in one week, as a UTC instant:

* a local time that does not exist on a spring-forward day (02:30 in most US zones) is read
  with the offset before the change, so it airs an hour later by the clock (03:30);
* a local time that happens twice on a fall-back day airs once, at its first occurrence.

:func:`run_schedule` (the leader's 30-second job) airs a slot once. It claims the slot first by
moving ``last_slot_at`` forward in a write transaction (a conditional update, so two processes
and restarts agree), then airs it; a slot found more than ``MISSED_GRACE`` late (the station
was down, the clock jumped) is logged and passed over, never aired late. Saving the schedule
marks every slot already past as done, so a change never airs a past slot.

A weekly test is ``ZCZC-EAS-RWT-…`` with a 15-minute purge time and no attention signal
(:data:`alertstation.eas.manual.NO_ATTENTION_EVENTS`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Final
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, or_, select, update

from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.eas import archive, voice
from alertstation.eas.airing import broadcast
from alertstation.eas.audio import render_message
from alertstation.eas.forward.config import check_body, check_station_id
from alertstation.eas.forward.tables import eas_rwt_schedule
from alertstation.eas.manual import ATTENTION_SECONDS, NO_ATTENTION_EVENTS
from alertstation.errors import Invalid
from alertstation.http.bodies import check_bool
from alertstation.same import DEFAULT_STATION_ID, MAX_LOCATIONS, SameHeader
from alertstation.settings_admin.sections import TIME_ZONE_FIELD, station_time_zone

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger("alertstation.eas")

SCHEDULE_ROW: Final[int] = 1
EVENT: Final[str] = "RWT"
ORIGINATOR: Final[str] = "EAS"
PURGE: Final[timedelta] = timedelta(minutes=15)
MISSED_GRACE: Final[timedelta] = timedelta(minutes=15)
MAX_VOICE_TEXT: Final[int] = 1000
SCHEDULE_ACTOR: Final[str] = "rwt-schedule"
WEEKDAYS: Final[tuple[str, ...]] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
_TIME = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")
_SEPARATORS = re.compile(r"[\s,;\-]+")
#: The fields that decide when slots fall; a change to one re-bases ``last_slot_at`` (so does a
#: change of the station's time zone: :func:`rebase_slots`).
TIMING: Final[frozenset[str]] = frozenset({"enabled", "weekday", "time_of_day"})


@dataclass(frozen=True)
class RwtSchedule:
    """The weekly test's schedule and content; the defaults are a station's first.

    ``time_zone`` is the station's, read with the schedule; it is not stored with it.
    """

    enabled: bool = False
    weekday: int = 2  # Wednesday
    time_of_day: str = "11:00"
    location_codes: tuple[str, ...] = ()
    station_id: str = DEFAULT_STATION_ID
    voice_text: str = ""
    time_zone: str = "UTC"

    @property
    def zone(self) -> ZoneInfo:
        """Return the schedule's time zone."""
        return ZoneInfo(self.time_zone)

    @property
    def local_time(self) -> time:
        """Return the local time of day of a slot."""
        hours, minutes = self.time_of_day.split(":")
        return time(int(hours), int(minutes))

    def as_dict(self) -> dict[str, Any]:
        """Return the schedule as JSON-ready data (with the weekday's name)."""
        data = asdict(self)
        data["location_codes"] = list(self.location_codes)
        data["weekday_name"] = WEEKDAYS[self.weekday].capitalize()
        return data


#: The schedule's own (stored, editable) fields.
FIELDS: Final[tuple[str, ...]] = tuple(
    f.name for f in fields(RwtSchedule) if f.name != TIME_ZONE_FIELD
)


# --- slots ------------------------------------------------------------------------------------


def slot_on(schedule: RwtSchedule, day: date) -> datetime:
    """Return the UTC instant of the slot on local date ``day`` (whatever its weekday)."""
    local = datetime.combine(day, schedule.local_time, tzinfo=schedule.zone)
    return local.astimezone(UTC)


def slot_at_or_before(schedule: RwtSchedule, now: datetime) -> datetime:
    """Return the latest slot at or before ``now`` (UTC)."""
    local = now.astimezone(schedule.zone)
    day = local.date() - timedelta(days=(local.weekday() - schedule.weekday) % 7)
    slot = slot_on(schedule, day)
    return slot if slot <= now else slot_on(schedule, day - timedelta(days=7))


def next_slot_after(schedule: RwtSchedule, now: datetime) -> datetime:
    """Return the first slot strictly after ``now`` (UTC)."""
    local = now.astimezone(schedule.zone)
    day = local.date() + timedelta(days=(schedule.weekday - local.weekday()) % 7)
    slot = slot_on(schedule, day)
    return slot if slot > now else slot_on(schedule, day + timedelta(days=7))


def upcoming(schedule: RwtSchedule, last: datetime | None, now: datetime) -> datetime | None:
    """Return the slot that airs next: a due one not yet aired, else the next; None when off."""
    if not schedule.enabled:
        return None
    current = slot_at_or_before(schedule, now)
    if (last is None or last < current) and now - current <= MISSED_GRACE:
        return current
    return next_slot_after(schedule, now)


# --- reading and saving -------------------------------------------------------------------------


def _weekday(value: Any) -> int:
    if isinstance(value, str) and value.strip().lower() in WEEKDAYS:
        return WEEKDAYS.index(value.strip().lower())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 6:
        return value
    raise Invalid(
        "weekday must be 0-6 (0 = Monday) or a day name such as Wednesday", field="weekday"
    )


def _time_of_day(value: Any) -> str:
    if not isinstance(value, str) or not _TIME.match(value.strip()):
        raise Invalid(
            "time_of_day must be HH:MM on the 24-hour clock, e.g. 11:00", field="time_of_day"
        )
    return value.strip()


def check_location_codes(value: Any) -> tuple[str, ...]:
    """Return SAME PSSCCC codes from a list or a text; 422 naming ``location_codes``."""
    if isinstance(value, str):
        codes = [code for code in _SEPARATORS.split(value) if code]
    elif isinstance(value, list | tuple) and all(isinstance(code, str) for code in value):
        codes = [code.strip() for code in value if code.strip()]
    else:
        raise Invalid(
            "location_codes must be SAME PSSCCC codes (text or a list)", field="location_codes"
        )
    codes = list(dict.fromkeys(codes))
    if len(codes) > MAX_LOCATIONS:
        raise Invalid(f"location_codes: at most {MAX_LOCATIONS} codes", field="location_codes")
    if codes:
        try:  # the header model checks each code and names the bad one
            SameHeader.build(ORIGINATOR, EVENT, codes, PURGE, DEFAULT_STATION_ID, issued=(1, 0, 0))
        except ValueError as ex:
            raise Invalid(f"location_codes: {ex}", field="location_codes") from None
    return tuple(codes)


def _voice_text(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid("voice_text must be a string", field="voice_text")
    text = value.strip()
    if len(text) > MAX_VOICE_TEXT or "\x00" in text:
        raise Invalid(f"voice_text: at most {MAX_VOICE_TEXT} characters", field="voice_text")
    return text


_CHECKS = {
    "enabled": lambda v: check_bool(v, "enabled"),
    "weekday": _weekday,
    "time_of_day": _time_of_day,
    "location_codes": check_location_codes,
    "station_id": check_station_id,
    "voice_text": _voice_text,
}


def read_changes(body: dict[str, Any]) -> dict[str, Any]:
    """Return the checked fields of a (partial) schedule body; 422 naming a bad field."""
    if TIME_ZONE_FIELD in body:
        raise Invalid(
            "time_zone: the weekly test follows the station time zone; set it in the "
            "application settings",
            field=TIME_ZONE_FIELD,
        )
    return check_body(body, _CHECKS)


def _row(conn: Connection) -> Any:
    return conn.execute(
        select(eas_rwt_schedule).where(eas_rwt_schedule.c.id == SCHEDULE_ROW)
    ).first()


def _from_row(row: Any, time_zone: str) -> RwtSchedule:
    return RwtSchedule(
        enabled=row.enabled,
        weekday=row.weekday,
        time_of_day=row.time_of_day,
        time_zone=time_zone,
        location_codes=tuple(code for code in row.location_codes.split("-") if code),
        station_id=row.station_id,
        voice_text=row.voice_text,
    )


def get_schedule(conn: Connection) -> tuple[RwtSchedule, datetime | None]:
    """Read the schedule (defaults when none was saved) and the last slot aired or passed.

    The schedule carries the station's time zone.
    """
    row = _row(conn)
    zone = station_time_zone(conn).key
    if row is None:
        return RwtSchedule(time_zone=zone), None
    return _from_row(row, zone), row.last_slot_at


def save_schedule(
    conn: Connection, changes: dict[str, Any], *, by: str | None, now: datetime
) -> tuple[RwtSchedule, list[str]]:
    """Check and apply changes inside the caller's write transaction; return (new, changed).

    An enabled schedule needs location codes. When a timing field changed, every slot at or
    before ``now`` counts as done, so the change never airs a slot already past.
    """
    current, last = get_schedule(conn)
    new = replace(current, **read_changes(changes))
    if new.enabled and not new.location_codes:
        raise Invalid(
            "location_codes: the weekly test needs at least one SAME code while it is enabled",
            field="location_codes",
        )
    changed = sorted(name for name in FIELDS if getattr(new, name) != getattr(current, name))
    if TIMING & set(changed) or last is None:
        baseline = slot_at_or_before(new, now)
        last = baseline if last is None else max(last, baseline)
    values = {
        **{name: getattr(new, name) for name in FIELDS},
        "location_codes": "-".join(new.location_codes),
        "last_slot_at": last,
        "updated_by": by,
        "updated_at": now,
    }
    done = conn.execute(
        eas_rwt_schedule.update().where(eas_rwt_schedule.c.id == SCHEDULE_ROW).values(**values)
    ).rowcount
    if not done:
        conn.execute(eas_rwt_schedule.insert().values(id=SCHEDULE_ROW, **values))
    return new, changed


def rebase_slots(conn: Connection, now: datetime) -> None:
    """Count every slot at or before ``now`` as done, in the station's (new) time zone.

    Called in the transaction that changes the station's time zone, so the change never airs a
    slot already past.
    """
    schedule, last = get_schedule(conn)
    if _row(conn) is None:
        return
    baseline = slot_at_or_before(schedule, now)
    if last is None or last < baseline:
        conn.execute(
            update(eas_rwt_schedule)
            .where(eas_rwt_schedule.c.id == SCHEDULE_ROW)
            .values(last_slot_at=baseline)
        )


def schedule_view(conn: Connection, now: datetime) -> dict[str, Any]:
    """Return the schedule with its next slot (UTC and local) and the last one, as JSON data."""
    schedule, last = get_schedule(conn)
    following = upcoming(schedule, last, now)
    return {
        "schedule": schedule.as_dict(),
        "next_slot": following.isoformat() if following else None,
        "next_slot_local": following.astimezone(schedule.zone).isoformat() if following else None,
        "last_slot": last.isoformat() if last else None,
    }


# --- airing ---------------------------------------------------------------------------------------


def air_rwt(
    station: Station,
    schedule: RwtSchedule,
    *,
    aired_by: str | None,
    actor: Actor,
    target: str,
    slot: datetime | None = None,
) -> dict[str, Any]:
    """Render and air a weekly test now; audit ``eas.broadcast`` afterwards (never blocking).

    Returns ``{"message": archive row, "voice": spoken | none | unavailable}``. A schedule
    without location codes is a 422. Without espeak-ng the test airs without its voice text.
    """
    if not schedule.location_codes:
        raise Invalid(
            "location_codes: set the weekly test's location codes first", field="location_codes"
        )
    with station.engine.connect() as conn:
        speaker = voice.saved_voice(conn)
    header = SameHeader.build(
        ORIGINATOR,
        EVENT,
        schedule.location_codes,
        PURGE,
        schedule.station_id,
        issued=station.clock(),
    )
    spoken = "none"

    def render(rate: int) -> archive.AiredMessage:
        nonlocal spoken
        speech = None
        if schedule.voice_text:
            try:
                speech, spoken = voice.speak(speaker, schedule.voice_text, rate), "spoken"
            except (voice.SpeechUnavailable, ValueError) as ex:
                log.warning("weekly test airs without its voice text: %s", ex)
                spoken = "unavailable"
        attention = 0.0 if EVENT in NO_ATTENTION_EVENTS else ATTENTION_SECONDS
        samples = render_message(
            header, sample_rate=rate, attention_seconds=attention, voice=speech
        )
        return archive.AiredMessage(header.encode(), samples, rate)

    row = broadcast.broadcast(
        station,
        origin="rwt",
        render=render,
        actor=actor,
        target=target,
        aired_by=aired_by,
        details=lambda: {"voice": spoken, **({"slot": slot.isoformat()} if slot else {})},
    )
    return {"message": row, "voice": spoken}


def _claim_slot(conn: Connection, slot: datetime) -> bool:
    """Move ``last_slot_at`` to ``slot`` unless it is there already; True when this call did."""
    c = eas_rwt_schedule.c
    done = conn.execute(
        update(eas_rwt_schedule)
        .where(c.id == SCHEDULE_ROW, or_(c.last_slot_at.is_(None), c.last_slot_at < slot))
        .values(last_slot_at=slot)
    ).rowcount
    return done == 1


def _release_slot(station: Station, slot: datetime, previous: datetime | None) -> None:
    """Give a claimed slot back after its airing failed, so the next run tries again."""
    c = eas_rwt_schedule.c
    with begin_write(station.engine) as conn:
        conn.execute(
            update(eas_rwt_schedule)
            .where(c.id == SCHEDULE_ROW, c.last_slot_at == slot)
            .values(last_slot_at=previous)
        )


def run_schedule(station: Station) -> str:
    """Air the weekly test when a slot is due; return what happened.

    ``off`` (disabled), ``waiting`` (no new slot), ``missed`` (found too late; passed over),
    ``aired`` or ``failed`` (airing raised; the slot is released and tried again while it is
    still within ``MISSED_GRACE``).
    """
    with begin_write(station.engine) as conn:
        now = station.clock()
        schedule, last = get_schedule(conn)
        if not schedule.enabled:
            return "off"
        slot = slot_at_or_before(schedule, now)
        if (last is not None and last >= slot) or not _claim_slot(conn, slot):
            return "waiting"
    late = now - slot
    if late > MISSED_GRACE:
        log.warning(
            "weekly test slot %s passed over: found %s late (more than %s); the next one airs",
            slot.isoformat(),
            late,
            MISSED_GRACE,
        )
        return "missed"
    try:
        result = air_rwt(
            station,
            schedule,
            aired_by=SCHEDULE_ACTOR,
            actor=Actor.system(SCHEDULE_ACTOR),
            target="eas_rwt:schedule",
            slot=slot,
        )
    except Exception as ex:
        log.error("weekly test of slot %s failed to air: %r", slot.isoformat(), ex)
        _release_slot(station, slot, last)
        return "failed"
    log.warning("weekly test aired for slot %s: %s", slot.isoformat(), result["message"]["header"])
    return "aired"
