"""The period and drill-down filters of a traffic report, parsed from a query string.

A period is a run of whole UTC days: ``days=N`` ends today (the station clock's UTC day), or
``start`` and ``end`` name the first and last day (``end`` included). Internally it is the
half-open epoch range ``[start_ts, end_ts)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from alertstation.errors import Invalid

DEFAULT_DAYS = 7
MAX_DAYS = 3_660
FILTER_NAMES = ("country", "path", "status", "browser", "os", "method", "ip")
MAX_FILTER_LENGTH = 1024


@dataclass(frozen=True)
class Period:
    """The UTC days ``first`` .. ``last`` (both included)."""

    first: date
    last: date

    @property
    def days(self) -> int:
        """Return the number of days in the period."""
        return (self.last - self.first).days + 1

    @property
    def start_ts(self) -> float:
        """Return the epoch second the period starts at (midnight UTC of ``first``)."""
        return datetime.combine(self.first, time(), UTC).timestamp()

    @property
    def end_ts(self) -> float:
        """Return the epoch second just past the period (midnight UTC after ``last``)."""
        return datetime.combine(self.last + timedelta(days=1), time(), UTC).timestamp()

    def previous(self) -> Period:
        """Return the period of equal length that ends the day before this one starts."""
        last = self.first - timedelta(days=1)
        return Period(last - timedelta(days=self.days - 1), last)

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form: first and last day, and the number of days."""
        return {"start": self.first.isoformat(), "end": self.last.isoformat(), "days": self.days}


@dataclass(frozen=True)
class Filters:
    """Drill-down filters; None means not filtered. ``status`` is a family digit (4 for 4xx)."""

    country: str | None = None
    path: str | None = None
    status: int | None = None
    browser: str | None = None
    os: str | None = None
    method: str | None = None
    ip: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form, the status family written ``4xx``."""
        form: dict[str, Any] = {name: getattr(self, name) for name in FILTER_NAMES}
        if self.status is not None:
            form["status"] = f"{self.status}xx"
        return form


def parse_period(params: Mapping[str, str], today: date) -> Period:
    """Return the period of ``days`` or ``start``/``end``; Invalid names the bad parameter."""
    start, end, days = params.get("start"), params.get("end"), params.get("days")
    if start or end:
        if days:
            raise Invalid("give days, or start and end, not both", field="days")
        if not (start and end):
            raise Invalid("start and end go together", field="end" if start else "start")
        first, last = _day(start, "start"), _day(end, "end")
        if last < first:
            raise Invalid("end is before start", field="end")
        if (last - first).days + 1 > MAX_DAYS:
            raise Invalid(f"a period is at most {MAX_DAYS} days", field="end")
        return Period(first, last)
    count = DEFAULT_DAYS
    if days:
        if not days.isdigit() or not 1 <= int(days) <= MAX_DAYS:
            raise Invalid(f"days must be a whole number within 1..{MAX_DAYS}", field="days")
        count = int(days)
    return Period(today - timedelta(days=count - 1), today)


def _day(text: str, name: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{name} must be a date written YYYY-MM-DD", field=name) from None


def parse_filters(params: Mapping[str, str]) -> Filters:
    """Return the drill-down filters present in ``params``; Invalid names the bad one."""
    values: dict[str, Any] = {}
    for name in FILTER_NAMES:
        value = params.get(name)
        if value is None or value == "":
            continue
        if len(value) > MAX_FILTER_LENGTH:
            raise Invalid(f"{name} is longer than {MAX_FILTER_LENGTH} characters", field=name)
        values[name] = value
    if "status" in values:
        text = values["status"].lower().removesuffix("xx")
        if len(text) != 1 or text not in "12345":
            raise Invalid("status must be a family: 1xx, 2xx, 3xx, 4xx or 5xx", field="status")
        values["status"] = int(text)
    if "method" in values:
        values["method"] = values["method"].upper()
    if "country" in values:
        values["country"] = values["country"].upper()
    return Filters(**values)
