"""Read the station log by month and add what operators write to it: notes, corrections and
chief-operator reviews.

A month (``YYYY-MM``) and its days are taken in the station's time zone: a month runs from its
first local midnight to the next month's. Entries are listed oldest first. Notes, corrections and
reviews are entries too (``note``, ``correction``, ``review``); each is also recorded in the
signed audit ledger by the resource that adds it (``eas.log.note``, ``eas.log.correction``,
``eas.log.reviewed``), in the same transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, Final

import orjson
from sqlalchemy import Connection, select

from alertstation.eas.log import record as kinds
from alertstation.eas.log.record import KINDS, record_entry
from alertstation.eas.log.tables import eas_log
from alertstation.errors import FieldError, NotFound

MONTH_PATTERN: Final[re.Pattern[str]] = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
EVENT_PATTERN: Final[re.Pattern[str]] = re.compile(r"[A-Z0-9]{3}")
#: What a note is about (47 CFR 11.35(a) and (b)), and the free-form rest.
NOTE_TOPICS: Final[dict[str, str]] = {
    "missed_test": "Required test not received",
    "out_of_service": "EAS equipment taken out of service",
    "returned_to_service": "EAS equipment returned to service",
    "other": "Note",
}
REVIEW_PERIODS: Final[tuple[str, str]] = ("month", "week")
TEXT_LIMIT: Final[int] = 2000
SOURCE_LIMIT: Final[int] = 64
#: How far ahead of the station's clock an operator may date a note (clock skew, typing).
NOTE_LEEWAY: Final[timedelta] = timedelta(minutes=5)

_c = eas_log.c


@dataclass(frozen=True)
class Month:
    """One calendar month in the station's time zone, and its UTC bounds."""

    year: int
    month: int
    zone: tzinfo

    @property
    def label(self) -> str:
        """Return ``YYYY-MM``."""
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def first_day(self) -> date:
        """Return the month's first local day."""
        return date(self.year, self.month, 1)

    @property
    def next_first_day(self) -> date:
        """Return the next month's first local day."""
        return date(self.year + self.month // 12, self.month % 12 + 1, 1)

    @property
    def start(self) -> datetime:
        """Return the month's first local midnight, in UTC."""
        return local_midnight(self.first_day, self.zone)

    @property
    def end(self) -> datetime:
        """Return the next month's first local midnight, in UTC (the end, excluded)."""
        return local_midnight(self.next_first_day, self.zone)

    @property
    def previous(self) -> str:
        """Return the label of the month before."""
        return f"{self.year - (self.month == 1):04d}-{(self.month - 2) % 12 + 1:02d}"

    @property
    def following(self) -> str:
        """Return the label of the month after."""
        return f"{self.next_first_day:%Y-%m}"


def local_midnight(day: date, zone: tzinfo) -> datetime:
    """Return the UTC moment of ``day``'s local midnight in ``zone``."""
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def parse_month(text: str | None, zone: tzinfo, now: datetime) -> Month:
    """Return the month ``YYYY-MM`` (the current local month when None or empty).

    A FieldError names ``month`` for anything else.
    """
    if not text:
        local = now.astimezone(zone)
        return Month(local.year, local.month, zone)
    found = MONTH_PATTERN.fullmatch(text)
    if found is None or not 1900 <= int(found.group(1)) <= 9998:
        raise FieldError("month", "month must be YYYY-MM, e.g. 2026-11")
    return Month(int(found.group(1)), int(found.group(2)), zone)


def _details(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def entry_as_dict(row: Any) -> dict[str, Any]:
    """Return an entry as JSON-ready data (``at`` in ISO 8601 UTC)."""
    return {
        "id": row.id,
        "kind": row.kind,
        "at": row.at.isoformat(),
        "source": row.source,
        "event_code": row.event_code,
        "header": row.header,
        "text": row.text,
        "result": row.result,
        "by": row.by,
        "details": _details(row.details),
        "corrects_id": row.corrects_id,
    }


@dataclass(frozen=True)
class LogFilter:
    """The list's filters: kind, source and event code (None: any)."""

    kind: str | None = None
    source: str | None = None
    event: str | None = None

    @classmethod
    def parse(cls, kind: str | None, source: str | None, event: str | None) -> LogFilter:
        """Return the filters of request parameters; a FieldError names a bad one."""
        if kind and kind not in KINDS:
            raise FieldError("kind", f"kind must be one of {', '.join(KINDS)}")
        if source and len(source) > SOURCE_LIMIT:
            raise FieldError("source", f"source must be at most {SOURCE_LIMIT} characters")
        event = event.upper() if event else None
        if event and not EVENT_PATTERN.fullmatch(event):
            raise FieldError("event", "event must be a three-letter event code, e.g. RWT")
        return cls(kind or None, source or None, event)


def list_entries(
    conn: Connection, month: Month, chosen: LogFilter | None = None
) -> list[dict[str, Any]]:
    """Return the month's entries, oldest first, each with the ids of its corrections."""
    chosen = chosen or LogFilter()
    query = select(eas_log).where(_c.at >= month.start, _c.at < month.end)
    if chosen.kind:
        query = query.where(_c.kind == chosen.kind)
    if chosen.source:
        query = query.where(_c.source == chosen.source)
    if chosen.event:
        query = query.where(_c.event_code == chosen.event)
    items = [entry_as_dict(row) for row in conn.execute(query.order_by(_c.at, _c.id))]
    corrected = _corrections_of(conn, [item["id"] for item in items])
    for item in items:
        item["corrected_by"] = corrected.get(item["id"], [])
    return items


@dataclass(frozen=True)
class MonthLog:
    """What the page, the API and the exports show of one month: its entries and reviews."""

    month: Month
    chosen: LogFilter
    entries: list[dict[str, Any]]
    reviews: list[dict[str, Any]]


def read_month(
    conn: Connection,
    month_text: str | None,
    zone: tzinfo,
    now: datetime,
    chosen: LogFilter | None = None,
) -> MonthLog:
    """Return the month ``YYYY-MM`` (default: this one) filtered by ``chosen``, with its reviews.

    A FieldError names a bad month.
    """
    month = parse_month(month_text, zone, now)
    chosen = chosen or LogFilter()
    return MonthLog(month, chosen, list_entries(conn, month, chosen), reviews_of(conn, month))


def _corrections_of(conn: Connection, ids: list[int]) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        query = select(_c.corrects_id, _c.id).where(_c.corrects_id.in_(chunk)).order_by(_c.id)
        for corrects_id, entry_id in conn.execute(query):
            found.setdefault(corrects_id, []).append(entry_id)
    return found


def sources(conn: Connection) -> list[str]:
    """Return every source the log names, for the page's filter."""
    query = select(_c.source).where(_c.source.is_not(None)).distinct().order_by(_c.source)
    return [str(value) for value in conn.execute(query).scalars()]


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldError(name, f"{name} is required")
    if len(value) > TEXT_LIMIT:
        raise FieldError(name, f"{name} must be at most {TEXT_LIMIT} characters")
    return value.strip()


def _moment(value: Any, name: str) -> datetime:
    if not isinstance(value, str):
        raise FieldError(name, f"{name} must be an ISO 8601 time, e.g. 2026-11-29T14:05:00Z")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise FieldError(
            name, f"{name} must be an ISO 8601 time, e.g. 2026-11-29T14:05:00Z"
        ) from None
    if moment.tzinfo is None:
        raise FieldError(name, f"{name} must name its time zone (Z or an offset)")
    return moment.astimezone(UTC)


def add_note(conn: Connection, body: dict[str, Any], *, by: str, now: datetime) -> dict[str, Any]:
    """Add a note: ``topic`` (one of :data:`NOTE_TOPICS`), ``text``, and optionally
    ``occurred_at`` (when the test was due or the equipment went out or came back; now by
    default, never ahead of now) and ``source`` (the source a missed test was due from)."""
    topic = body.get("topic") or "other"
    if topic not in NOTE_TOPICS:
        raise FieldError("topic", f"topic must be one of {', '.join(NOTE_TOPICS)}")
    text = _text(body.get("text"), "text")
    at = now
    if body.get("occurred_at"):
        at = _moment(body["occurred_at"], "occurred_at")
        if at > now + NOTE_LEEWAY:
            raise FieldError("occurred_at", "occurred_at cannot be in the future")
    source = body.get("source") or None
    if source is not None and (not isinstance(source, str) or len(source) > SOURCE_LIMIT):
        raise FieldError("source", f"source must be text of at most {SOURCE_LIMIT} characters")
    entry_id = record_entry(
        conn,
        kinds.NOTE,
        at=at,
        source=source,
        text=f"{NOTE_TOPICS[topic]}: {text}",
        result=topic,
        by=by,
        details={"topic": topic, "note": text, "recorded_at": now},
    )
    return get_entry(conn, entry_id)


def add_correction(
    conn: Connection, corrects: Any, body: dict[str, Any], *, by: str, now: datetime
) -> dict[str, Any]:
    """Add a correction of entry ``corrects`` (404 when there is none); the entry stays."""
    if not isinstance(corrects, int) or isinstance(corrects, bool):
        raise FieldError("corrects", "corrects must be the id of the entry to correct")
    original = conn.execute(select(eas_log).where(_c.id == corrects)).first()
    if original is None:
        raise NotFound(f"No station log entry {corrects}.")
    text = _text(body.get("text"), "text")
    entry_id = record_entry(
        conn,
        kinds.CORRECTION,
        at=now,
        source=original.source,
        text=f"Correction of entry {corrects} ({original.kind}): {text}",
        by=by,
        details={"correction": text, "corrected_kind": original.kind},
        corrects=corrects,
    )
    return get_entry(conn, entry_id)


@dataclass(frozen=True)
class Period:
    """A reviewed period: a month or a Sunday-to-Saturday week, as local days."""

    kind: str
    first: date
    last: date

    @property
    def label(self) -> str:
        """Return ``month 2026-11`` or ``week 2026-11-22 to 2026-11-28``."""
        if self.kind == "month":
            return f"month {self.first:%Y-%m}"
        return f"week {self.first.isoformat()} to {self.last.isoformat()}"


def parse_period(body: dict[str, Any], zone: tzinfo, now: datetime) -> Period:
    """Return the reviewed period of ``{"period": "month", "month": "YYYY-MM"}`` or
    ``{"period": "week", "week_start": "YYYY-MM-DD"}`` (a Sunday); never one that has not begun."""
    kind = body.get("period")
    if kind not in REVIEW_PERIODS:
        raise FieldError("period", "period must be month or week")
    today = now.astimezone(zone).date()
    if kind == "month":
        if not isinstance(body.get("month"), str) or not body["month"]:
            raise FieldError("month", "month must be YYYY-MM, e.g. 2026-11")
        month = parse_month(body["month"], zone, now)
        first, last = month.first_day, month.next_first_day - timedelta(days=1)
    else:
        value = body.get("week_start")
        try:
            first = date.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            first = None
        if first is None or len(value) != 10:
            raise FieldError("week_start", "week_start must be a date YYYY-MM-DD (a Sunday)")
        if first.isoweekday() != 7:
            raise FieldError("week_start", "week_start must be a Sunday (weeks run to Saturday)")
        last = first + timedelta(days=6)
    if first > today:
        raise FieldError(kind if kind == "month" else "week_start", "that period has not begun")
    return Period(kind, first, last)


def add_review(
    conn: Connection, period: Period, *, by: str, now: datetime, note: str | None = None
) -> dict[str, Any]:
    """Record "Reviewed by ``by`` at ``now``" for ``period``."""
    if note is not None:
        note = _text(note, "note")
    entry_id = record_entry(
        conn,
        kinds.REVIEW,
        at=now,
        source="operator",
        text=f"Reviewed {period.label} by {by}" + (f": {note}" if note else ""),
        result=period.kind,
        by=by,
        details={
            "period": period.kind,
            "first_day": period.first.isoformat(),
            "last_day": period.last.isoformat(),
            "note": note,
        },
    )
    return get_entry(conn, entry_id)


def reviews_of(conn: Connection, month: Month) -> list[dict[str, Any]]:
    """Return the reviews of any period that overlaps ``month``, oldest first."""
    rows = conn.execute(select(eas_log).where(_c.kind == kinds.REVIEW).order_by(_c.at, _c.id))
    found = []
    last_day = month.next_first_day - timedelta(days=1)
    for row in rows:
        item = entry_as_dict(row)
        try:
            first = date.fromisoformat(item["details"]["first_day"])
            last = date.fromisoformat(item["details"]["last_day"])
        except (KeyError, TypeError, ValueError):
            continue
        if first <= last_day and last >= month.first_day:
            found.append(item)
    return found


def get_entry(conn: Connection, entry_id: int) -> dict[str, Any]:
    """Return one entry; 404 when there is none."""
    row = conn.execute(select(eas_log).where(_c.id == entry_id)).first()
    if row is None:
        raise NotFound(f"No station log entry {entry_id}.")
    return entry_as_dict(row)
