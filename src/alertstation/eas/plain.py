"""Plain-language text of a SAME header, as ENDECs print it (the one home of that text).

    The National Weather Service has issued a Tornado Warning for Putnam, OH and Allen, OH
    beginning at 10:21 PM and ending at 10:51 PM EST. Message from WUXT/FM.

* The issuer and the event are named from ``same.ORIGINATORS`` and ``same.EVENTS``.
* Places are named by :class:`alertstation.zones.places.PlaceNames`: counties and their parts
  from the FIPS table (the bundled snapshot before any sync), ``000000`` "the United States",
  ``0SS000`` "all of Ohio", marine zones by the catalog's names; an unknown code stays a code.
  Two places read "A and B"; three or more "A; B; and C", since each name holds a comma.
* Times are the issue time and issue time + purge, in the station's time zone, with its
  abbreviation. The header carries no year: the year is the one that puts the issue time
  nearest ``near`` (when the message was received, sent or created; now by default). When the
  message ends on another local day than it begins, both dates are named.

Callers with a Station use ``PlainLanguage.for_station(station, conn).text(header, near=...)``;
others ``plain_text(header, places, time_zone=..., near=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from alertstation.same import EVENTS, ORIGINATORS, SameHeader
from alertstation.settings_admin.sections import station_time_zone
from alertstation.zones.places import PlaceNames

if TYPE_CHECKING:
    from alertstation.context import Station


def issued_moment(header: SameHeader, near: datetime | None = None) -> datetime:
    """Return the UTC issue time of ``header`` in the year that puts it nearest ``near``."""
    reference = (near or datetime.now(UTC)).astimezone(UTC)
    candidates = []
    for year in (reference.year - 1, reference.year, reference.year + 1):
        try:
            candidates.append(header.issued_at(year))
        except ValueError:  # day 366 of a common year
            continue
    return min(candidates, key=lambda moment: abs(moment - reference))


def join_places(names: Sequence[str]) -> str:
    """Join place names: "A", "A and B", "A; B; and C"."""
    if len(names) <= 1:
        return "".join(names)
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return "; ".join(names[:-1]) + f"; and {names[-1]}"


def clock_time(moment: datetime) -> str:
    """Return ``10:21 PM`` for a moment (in its own time zone)."""
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def zone_label(moment: datetime) -> str:
    """Return the time zone's abbreviation at ``moment`` (``EST``; ``UTC-03`` for a bare offset)."""
    name = moment.tzname() or "UTC"
    return f"UTC{name}" if name[:1] in "+-" else name


def _date(moment: datetime) -> str:
    return f"{moment:%B} {moment.day}"


def _period(start: datetime, end: datetime) -> str:
    start_zone, end_zone = zone_label(start), zone_label(end)
    begin = clock_time(start) + (f" {start_zone}" if start_zone != end_zone else "")
    finish = f"{clock_time(end)} {end_zone}"
    if start.date() == end.date():
        return f"beginning at {begin} and ending at {finish}"
    return f"beginning at {begin} on {_date(start)} and ending at {finish} on {_date(end)}"


def _article(name: str) -> str:
    return "an" if name[:1].upper() in "AEIOU" else "a"


def plain_text(
    header: SameHeader | str,
    places: PlaceNames | None = None,
    *,
    time_zone: tzinfo = UTC,
    near: datetime | None = None,
) -> str:
    """Return the plain-language text of ``header`` (a SameHeader or its exact text).

    ``places`` names the location codes (the bundled county snapshot when None); ``time_zone``
    is the station's; ``near`` fixes the year (see the module text). Header text that does not
    parse is a ValueError naming the bad field, as ``SameHeader.parse`` raises it.
    """
    if isinstance(header, str):
        header = SameHeader.parse(header)
    names = places or PlaceNames()
    originator = ORIGINATORS[header.org]
    event = EVENTS[header.event].name
    issued = issued_moment(header, near)
    start = issued.astimezone(time_zone)
    end = (issued + header.purge).astimezone(time_zone)
    verb = "have" if originator.plural else "has"
    where = join_places(names.describe_all(header.locations))
    return (
        f"{originator.issuer} {verb} issued {_article(event)} {event} for {where} "
        f"{_period(start, end)}. Message from {header.station_id}."
    )


class PlainLanguage:
    """Plain-language text with one station's place names and time zone."""

    def __init__(self, places: PlaceNames, time_zone: tzinfo) -> None:
        self.places = places
        self.time_zone = time_zone

    @classmethod
    def for_station(cls, station: Station, conn: Connection) -> PlainLanguage:
        """Return the station's: its zone catalog's names and its configured time zone."""
        return cls(PlaceNames(station.zones), station_time_zone(conn))

    @classmethod
    def for_connection(cls, conn: Connection) -> PlainLanguage:
        """Return the station's without its catalog: its time zone, counties and parts named
        from the bundled county table (marine codes stay codes)."""
        return cls(PlaceNames(), station_time_zone(conn))

    def text(self, header: SameHeader | str, *, near: datetime | None = None) -> str:
        """Return the plain-language text of ``header`` (see :func:`plain_text`)."""
        return plain_text(header, self.places, time_zone=self.time_zone, near=near)

    def text_or_none(self, header: str | None, *, near: datetime | None = None) -> str | None:
        """Return the text of header text that parses, None for one that does not (or None)."""
        if not header:
            return None
        try:
            return self.text(header, near=near)
        except ValueError:
            return None
