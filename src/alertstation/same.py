"""Build, parse and validate SAME headers (47 CFR 11.31).

A header reads ``ZCZC-ORG-EEE-PSSCCC(-PSSCCC…)+TTTT-JJJHHMM-LLLLLLLL-``: originator, event,
one to 31 location codes, purge time, issue time (Julian day and UTC hour and minute) and the
sending station's eight-character id, padded with spaces. ``SameHeader`` holds one header in a
normalised form, so ``SameHeader.parse(h.encode()) == h``; every problem is a ValueError whose
message starts with the name of the bad field (``"location code 3: …"``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

START_CODE: Final[str] = "ZCZC"
EOM_CODE: Final[str] = "NNNN"
MAX_LOCATIONS: Final[int] = 31
#: Offshore and Great Lakes marine areas: the SAME area number (the SS of PSSCCC) that stands in
#: place of a state, and the UGC prefix of the marine zones it numbers (``096142`` is LEZ142).
MARINE_AREAS: Final[dict[int, str]] = {
    57: "PZ", 58: "PK", 59: "PH", 61: "PS", 65: "PM", 73: "AN", 75: "AM", 77: "GM",
    91: "LS", 92: "LM", 93: "LH", 94: "LC", 96: "LE", 97: "LO", 98: "SL",
}  # fmt: skip
STATION_ID_LENGTH: Final[int] = 8
DEFAULT_STATION_ID: Final[str] = "ALRTSTN"  # until an operator names the station
MAX_PURGE: Final[timedelta] = timedelta(hours=99, minutes=30)


class Originator(NamedTuple):
    """One originator code: its name in 47 CFR 11.31(d) and how plain-language text names it."""

    name: str
    issuer: str  # the subject of "… has issued" / "… have issued"
    plural: bool = False


# 47 CFR 11.31(d) as amended by FCC 22-75 (effective 2022-12-12), which renamed the Primary
# Entry Point System the National Public Warning System.
ORIGINATORS: Final[dict[str, Originator]] = {
    "EAS": Originator("EAS Participant", "An EAS Participant"),
    "CIV": Originator("Civil authorities", "The civil authorities", plural=True),
    "WXR": Originator("National Weather Service", "The National Weather Service"),
    "PEP": Originator("National Public Warning System", "The National Public Warning System"),
}


class EventCode(NamedTuple):
    """One event code: its name, its kind, and whether 47 CFR 11.31(e) lists it."""

    name: str
    category: str  # national, test, weather, non-weather, administrative
    in_cfr: bool = True


def _events(category: str, in_cfr: bool, rows: str) -> dict[str, EventCode]:
    """Read ``CODE Name`` lines into EventCode entries of one category."""
    table = {}
    for line in rows.strip().splitlines():
        code, name = line.strip().split(" ", 1)
        table[code] = EventCode(name, category, in_cfr)
    return table


# 47 CFR 11.31(e) as currently amended: EWW, SSA and SSW (FCC 16-80, 2016), BLU (FCC 17-170,
# 2018), the plain-language national names (FCC 22-75, 2022: EAN "National Emergency Message",
# NPT "Nationwide Test of the Emergency Alert System") and MEP (FCC 24-83, effective
# 2025-09-08); then the codes NOAA Weather Radio sends that the FCC table does not list, named
# as the National Weather Service names them. Sources: docs/decisions.md.
EVENTS: Final[dict[str, EventCode]] = {
    **_events(
        "national",
        True,
        """
        EAN National Emergency Message
        NIC National Information Center
        """,
    ),
    **_events(
        "test",
        True,
        """
        NPT Nationwide Test of the Emergency Alert System
        RMT Required Monthly Test
        RWT Required Weekly Test
        DMO Practice/Demo Warning
        """,
    ),
    **_events(
        "administrative",
        True,
        """
        ADR Administrative Message
        NMN Network Message Notification
        """,
    ),
    **_events(
        "weather",
        True,
        """
        BZW Blizzard Warning
        CFA Coastal Flood Watch
        CFW Coastal Flood Warning
        DSW Dust Storm Warning
        EWW Extreme Wind Warning
        FFA Flash Flood Watch
        FFW Flash Flood Warning
        FFS Flash Flood Statement
        FLA Flood Watch
        FLW Flood Warning
        FLS Flood Statement
        HWA High Wind Watch
        HWW High Wind Warning
        HUA Hurricane Watch
        HUW Hurricane Warning
        HLS Hurricane Statement
        SVA Severe Thunderstorm Watch
        SVR Severe Thunderstorm Warning
        SVS Severe Weather Statement
        SMW Special Marine Warning
        SPS Special Weather Statement
        SSA Storm Surge Watch
        SSW Storm Surge Warning
        TOA Tornado Watch
        TOR Tornado Warning
        TRA Tropical Storm Watch
        TRW Tropical Storm Warning
        TSA Tsunami Watch
        TSW Tsunami Warning
        WSA Winter Storm Watch
        WSW Winter Storm Warning
        """,
    ),
    **_events(
        "non-weather",
        True,
        """
        AVA Avalanche Watch
        AVW Avalanche Warning
        BLU Blue Alert
        CAE Child Abduction Emergency
        CDW Civil Danger Warning
        CEM Civil Emergency Message
        EQW Earthquake Warning
        EVI Evacuation Immediate
        FRW Fire Warning
        HMW Hazardous Materials Warning
        LAE Local Area Emergency
        LEW Law Enforcement Warning
        MEP Missing and Endangered Persons
        NUW Nuclear Power Plant Warning
        RHW Radiological Hazard Warning
        SPW Shelter in Place Warning
        TOE 911 Telephone Outage Emergency
        VOW Volcano Warning
        """,
    ),
    # Sent on NOAA Weather Radio but not in the FCC table (EAT was dropped from it).
    **_events(
        "national",
        False,
        """
        EAT Emergency Action Termination
        """,
    ),
    **_events(
        "test",
        False,
        """
        NAT National Audible Test
        NST National Silent Test
        """,
    ),
    **_events(
        "weather",
        False,
        """
        SQW Snow Squall Warning
        """,
    ),
    **_events(
        "administrative",
        False,
        """
        TXB Transmitter Backup On
        TXF Transmitter Carrier Off
        TXO Transmitter Carrier On
        TXP Transmitter Primary On
        """,
    ),
}

_LOCATION = re.compile(r"[0-9]{6}")
_DIGITS4 = re.compile(r"[0-9]{4}")
_DIGITS7 = re.compile(r"[0-9]{7}")
_STATION_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"-", "+"}


class IssueTime(NamedTuple):
    """The JJJHHMM field: day of the year (1-366) and UTC hour and minute."""

    day: int
    hour: int
    minute: int

    def to_datetime(self, year: int) -> datetime:
        """Return the UTC datetime of this issue time in ``year``."""
        if self.day == 366 and not _is_leap(year):
            raise ValueError(f"issue time: day 366 does not exist in {year}")
        start = datetime(year, 1, 1, tzinfo=UTC)
        return start + timedelta(days=self.day - 1, hours=self.hour, minutes=self.minute)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def purge_step(minutes: int) -> int:
    """Return the legal purge-time step at ``minutes``: 15 up to one hour, 30 beyond."""
    return 15 if minutes <= 60 else 30


def round_up_purge(duration: timedelta) -> timedelta:
    """Return the shortest legal purge time at least ``duration`` long, at most 99 h 30 min."""
    minutes = math.ceil(duration.total_seconds() / 60)
    step = purge_step(minutes)
    return min(timedelta(minutes=math.ceil(minutes / step) * step), MAX_PURGE)


def _check_purge(purge: object) -> timedelta:
    """Return the purge time as a timedelta, or raise ValueError naming the purge time."""
    if isinstance(purge, tuple) and len(purge) == 2:
        hours, minutes = purge
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in purge):
            raise ValueError(f"purge time: hours and minutes must be ints, got {purge!r}")
        if not (0 <= hours <= 99 and 0 <= minutes <= 59):
            raise ValueError(f"purge time: {hours:d} h {minutes:d} min is out of range")
        purge = timedelta(hours=hours, minutes=minutes)
    if not isinstance(purge, timedelta):
        raise ValueError(
            f"purge time: expected a timedelta or (hours, minutes), got {type(purge).__name__}"
        )
    seconds = purge.total_seconds()
    minutes_total = int(seconds // 60)
    if seconds <= 0 or seconds != minutes_total * 60:
        raise ValueError(f"purge time: must be a positive whole number of minutes, got {purge}")
    if purge > MAX_PURGE:
        raise ValueError(f"purge time: must be at most 99 h 30 min, got {purge}")
    if minutes_total % purge_step(minutes_total):
        raise ValueError(
            "purge time: must be in 15-minute steps up to one hour and 30-minute steps beyond, "
            f"got {minutes_total // 60:02d}{minutes_total % 60:02d}"
        )
    return purge


def _check_issued(issued: object) -> IssueTime:
    """Return the issue time as an IssueTime, or raise ValueError naming the issue time."""
    if isinstance(issued, datetime):
        if issued.tzinfo is not None:
            issued = issued.astimezone(UTC)
        # A naive datetime is taken as UTC, like naive timestamps elsewhere in the station.
        return IssueTime(issued.timetuple().tm_yday, issued.hour, issued.minute)
    if not (isinstance(issued, tuple) and len(issued) == 3):
        raise ValueError(
            "issue time: expected a datetime or (julian_day, hour, minute), "
            f"got {type(issued).__name__}"
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in issued):
        raise ValueError(f"issue time: day, hour and minute must be ints, got {issued!r}")
    day, hour, minute = issued
    if not 1 <= day <= 366:
        raise ValueError(f"issue time: Julian day must be 001-366, got {day:03d}")
    if not 0 <= hour <= 23:
        raise ValueError(f"issue time: hour must be 00-23 UTC, got {hour:02d}")
    if not 0 <= minute <= 59:
        raise ValueError(f"issue time: minute must be 00-59, got {minute:02d}")
    return IssueTime(day, hour, minute)


def _check_location(index: int, code: object) -> str:
    """Return a valid PSSCCC code, or raise ValueError naming ``location code <index>``."""
    field = f"location code {index}"
    if not isinstance(code, str) or not _LOCATION.fullmatch(code):
        raise ValueError(f"{field}: expected six digits PSSCCC, got {code!r}")
    area = int(code[1:3])
    if area > 78 and area not in MARINE_AREAS:
        raise ValueError(
            f"{field}: state FIPS code must be 00-78 or a marine area number "
            f"(91-98 on the Great Lakes), got {code[1:3]} in {code!r}"
        )
    return code


def _check_locations(locations: object) -> tuple[str, ...]:
    """Return the location codes as a tuple of 1-31 valid PSSCCC strings."""
    if isinstance(locations, str) or not isinstance(locations, tuple | list):
        raise ValueError(f"locations: expected a tuple of PSSCCC codes, got {locations!r}")
    if not 1 <= len(locations) <= MAX_LOCATIONS:
        raise ValueError(f"locations: a header carries 1-31 location codes, got {len(locations)}")
    return tuple(_check_location(i, code) for i, code in enumerate(locations, start=1))


def _check_station(station: object) -> str:
    """Return the station id right-padded with spaces to exactly eight characters."""
    if not isinstance(station, str):
        raise ValueError(f"station id: expected a str, got {type(station).__name__}")
    if "-" in station:
        raise ValueError(f"station id: may not contain '-' (use '/'), got {station!r}")
    bad = sorted(set(station) - _STATION_CHARS)
    if bad:
        raise ValueError(f"station id: character {bad[0]!r} is not allowed in {station!r}")
    if len(station) > STATION_ID_LENGTH:
        raise ValueError(f"station id: at most 8 characters, got {len(station)} in {station!r}")
    if not station.strip() or station[0] == " ":
        raise ValueError(f"station id: must start with a non-space character, got {station!r}")
    return station.ljust(STATION_ID_LENGTH)


@dataclass(frozen=True)
class SameHeader:
    """One SAME header, normalised: purge as a timedelta, issue time as an IssueTime.

    ``issued`` may be given as a datetime (converted to UTC; a naive one is taken as UTC) or as
    ``(julian_day, hour, minute)``; ``purge`` as a timedelta or ``(hours, minutes)``;
    ``station`` with up to eight characters, stored padded with spaces to exactly eight as
    stations send it. ``parse`` keeps a received station id as it was sent, padded or not.
    """

    org: str
    event: str
    locations: tuple[str, ...]
    purge: timedelta
    issued: IssueTime
    station: str

    def __post_init__(self) -> None:
        if not isinstance(self.org, str) or self.org not in ORIGINATORS:
            raise ValueError(
                f"originator: expected one of {', '.join(ORIGINATORS)}, got {self.org!r}"
            )
        if not isinstance(self.event, str) or self.event not in EVENTS:
            raise ValueError(f"event: unknown event code {self.event!r}")
        object.__setattr__(self, "locations", _check_locations(self.locations))
        object.__setattr__(self, "purge", _check_purge(self.purge))
        object.__setattr__(self, "issued", _check_issued(self.issued))
        object.__setattr__(self, "station", _check_station(self.station))

    @classmethod
    def build(
        cls,
        org: str,
        event: str,
        locations: tuple[str, ...] | list[str],
        purge: timedelta | tuple[int, int],
        station: str,
        issued: datetime | tuple[int, int, int] | None = None,
    ) -> SameHeader:
        """Return a header issued at ``issued`` (default: now, UTC, to the minute)."""
        when = datetime.now(UTC) if issued is None else issued
        return cls(org, event, tuple(locations), purge, when, station)  # type: ignore[arg-type]

    @property
    def org_name(self) -> str:
        """Return the originator's name, e.g. ``National Weather Service`` for WXR."""
        return ORIGINATORS[self.org].name

    @property
    def event_name(self) -> str:
        """Return the event's name, e.g. ``Tornado Warning`` for TOR."""
        return EVENTS[self.event].name

    @property
    def station_id(self) -> str:
        """Return the station id without its padding."""
        return self.station.rstrip(" ")

    @property
    def purge_code(self) -> str:
        """Return the TTTT field, e.g. ``0130`` for an hour and a half."""
        minutes = int(self.purge.total_seconds()) // 60
        return f"{minutes // 60:02d}{minutes % 60:02d}"

    @property
    def issued_code(self) -> str:
        """Return the JJJHHMM field."""
        day, hour, minute = self.issued
        return f"{day:03d}{hour:02d}{minute:02d}"

    def issued_at(self, year: int) -> datetime:
        """Return the UTC issue time in ``year`` (the header itself carries no year)."""
        return self.issued.to_datetime(year)

    def expires_at(self, year: int) -> datetime:
        """Return the UTC time the message expires: issue time plus purge time."""
        return self.issued_at(year) + self.purge

    def encode(self) -> str:
        """Return the header text, ``ZCZC-…-`` with the trailing dash."""
        return (
            f"{START_CODE}-{self.org}-{self.event}-{'-'.join(self.locations)}"
            f"+{self.purge_code}-{self.issued_code}-{self.station}-"
        )

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def parse(cls, text: str) -> SameHeader:
        """Parse header text exactly (no preamble, no surrounding whitespace)."""
        if not isinstance(text, str):
            raise ValueError(f"header: expected a str, got {type(text).__name__}")
        if not text.startswith(START_CODE + "-"):
            raise ValueError(f"start code: header must begin with 'ZCZC-', got {text[:5]!r}")
        if text.count("+") != 1:
            raise ValueError(
                f"header: expected exactly one '+' before the purge time, found {text.count('+')}"
            )
        head, tail = text[len(START_CODE) + 1 :].split("+")
        fields = head.split("-")
        if len(fields) < 2:
            raise ValueError(f"header: expected ORG-EEE-PSSCCC before '+', got {head!r}")
        if len(fields) == 2:
            raise ValueError(f"locations: at least one location code is required, got {head!r}")
        org, event, *locations = fields
        if len(org) != 3:
            raise ValueError(f"originator: expected three letters, got {org!r}")
        if len(event) != 3:
            raise ValueError(f"event: expected three letters, got {event!r}")
        purge, issued, station = _split_tail(tail)
        header = cls(org, event, tuple(locations), purge, issued, station)
        # Keep the station id exactly as sent: some encoders send fewer than eight characters
        # (``WTSP/TV-``), and re-encoding must reproduce the received text.
        object.__setattr__(header, "station", station)
        return header


def _split_tail(tail: str) -> tuple[timedelta, IssueTime, str]:
    """Parse ``TTTT-JJJHHMM-LLLLLLLL-`` into purge, issue time and station id."""
    parts = tail.split("-")
    purge_text = parts[0]
    if not _DIGITS4.fullmatch(purge_text):
        raise ValueError(f"purge time: expected four digits HHMM, got {purge_text!r}")
    hours, minutes = int(purge_text[:2]), int(purge_text[2:])
    if minutes > 59:
        raise ValueError(f"purge time: minutes must be 00-59, got {purge_text!r}")
    purge = _check_purge(timedelta(hours=hours, minutes=minutes))
    issued_text = parts[1] if len(parts) > 1 else ""
    if not _DIGITS7.fullmatch(issued_text):
        raise ValueError(f"issue time: expected seven digits JJJHHMM, got {issued_text!r}")
    issued = _check_issued((int(issued_text[:3]), int(issued_text[3:5]), int(issued_text[5:])))
    if len(parts) != 4 or parts[3] != "":
        station_text = "-".join(parts[2:])
        raise ValueError(
            "station id: expected up to eight characters without '-', then a closing '-', "
            f"got {station_text!r}"
        )
    station = parts[2]
    _check_station(station)
    return purge, issued, station


def message_key(header: SameHeader) -> str:
    """Return what makes two headers the same message: everything but the station id.

    A message heard on two sources, or relayed under the station's own id, keeps its key.
    """
    locations = "-".join(header.locations)
    return (
        f"{START_CODE}-{header.org}-{header.event}-{locations}"
        f"+{header.purge_code}-{header.issued_code}"
    )


def is_eom(text: str) -> bool:
    """Return True for the end-of-message code ``NNNN``."""
    return text == EOM_CODE


#: National messages: the Emergency Action Notification and the National Periodic Test. A
#: station airs them at once, ahead of anything else, and relays them whole (47 CFR 11.54).
NATIONAL_EVENTS: Final[frozenset[str]] = frozenset({"EAN", "NPT"})


def is_national(header: str) -> bool:
    """Return True when a header text's event field is EAN or NPT (``ZCZC-ORG-EEE-…``)."""
    return header[9:12] in NATIONAL_EVENTS and header.startswith("ZCZC-")
