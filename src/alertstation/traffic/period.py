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
#: How a report's title names each filter.
FILTER_LABELS = {
    "country": "country",
    "path": "path",
    "status": "status",
    "browser": "browser",
    "os": "OS",
    "method": "method",
    "ip": "visitor",
}


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
    """Drill-down filters; None means not filtered.

    ``status`` is a family digit (4 for 4xx); ``status_code`` one exact answer code (404). The
    query parameter ``status`` sets one or the other: ``4xx`` a family, ``404`` a code.
    """

    country: str | None = None
    path: str | None = None
    status: int | None = None
    status_code: int | None = None
    browser: str | None = None
    os: str | None = None
    method: str | None = None
    ip: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form, ``status`` as the query writes it (``4xx`` or ``404``)."""
        form: dict[str, Any] = {name: getattr(self, name) for name in FILTER_NAMES}
        if self.status_code is not None:
            form["status"] = str(self.status_code)
        elif self.status is not None:
            form["status"] = f"{self.status}xx"
        return form

    def active(self) -> list[tuple[str, str]]:
        """Return (name, value) of each filter applied, in ``FILTER_NAMES`` order."""
        form = self.as_dict()
        return [(name, str(form[name])) for name in FILTER_NAMES if form[name] is not None]


def report_title(period: Period, filters: Filters) -> str:
    """Return the title of a report: its period and every filter applied, or "all traffic".

    The CSV export and the PDF built in the browser both carry it, so a filtered export never
    reads as the whole of the traffic.
    """
    chosen = filters.active()
    scope = (
        "filtered to " + ", ".join(f"{FILTER_LABELS[name]} {value}" for name, value in chosen)
        if chosen
        else "all traffic"
    )
    return f"Web traffic {period.first.isoformat()} to {period.last.isoformat()} (UTC), {scope}"


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
        text = values.pop("status").lower()
        if len(text) == 3 and text[0] in "12345" and text[1:].isdigit():
            values["status_code"] = int(text)
        else:
            family = text.removesuffix("xx")
            if len(family) != 1 or family not in "12345":
                raise Invalid(
                    "status must be a family (1xx to 5xx) or a code (100 to 599), e.g. 4xx or 404",
                    field="status",
                )
            values["status"] = int(family)
    if "method" in values:
        values["method"] = values["method"].upper()
    if "country" in values:
        values["country"] = values["country"].upper()
    return Filters(**values)
