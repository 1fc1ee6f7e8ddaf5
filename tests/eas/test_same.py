"""SAME header model: build, parse, validate, and name the bad field in every error."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alertstation import same
from alertstation.same import EVENTS, ORIGINATORS, IssueTime, SameHeader

REAL_HEADERS = (
    "ZCZC-CIV-LEW-004013+1000-3032318-WOLF/IP -",
    "ZCZC-EAS-RWT-012057-012081-012101-012103-012115+0030-2780415-WTSP/TV-",
)
STATION_CHARS = string.ascii_uppercase + string.digits + "/"
PURGE_MINUTES = [15, 30, 45, 60, *range(90, 99 * 60 + 31, 30)]


# --- strategies -----------------------------------------------------------------------------


def location_codes() -> st.SearchStrategy[str]:
    """Return valid PSSCCC codes: P 0-9, SS 00-78 or a marine area, CCC 000-999."""
    return st.builds(
        lambda p, s, c: f"{p}{s:02d}{c:03d}",
        st.integers(0, 9),
        st.one_of(st.integers(0, 78), st.sampled_from(sorted(same.MARINE_AREAS))),
        st.integers(0, 999),
    )


def station_ids() -> st.SearchStrategy[str]:
    """Return 1-8 character station ids as a caller would give them (no padding)."""
    printable = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "-+")
    first = st.sampled_from(STATION_CHARS)
    rest = st.text(alphabet=printable, max_size=7)
    return st.builds(lambda a, b: (a + b).rstrip(" "), first, rest)


@st.composite
def headers(draw: st.DrawFn) -> SameHeader:
    """Return valid SameHeaders covering every field's whole legal range."""
    minutes = draw(st.sampled_from(PURGE_MINUTES))
    purge: timedelta | tuple[int, int] = draw(
        st.sampled_from([timedelta(minutes=minutes), (minutes // 60, minutes % 60)])
    )
    return SameHeader(
        org=draw(st.sampled_from(sorted(ORIGINATORS))),
        event=draw(st.sampled_from(sorted(EVENTS))),
        locations=tuple(draw(st.lists(location_codes(), min_size=1, max_size=31))),
        purge=purge,  # type: ignore[arg-type]
        issued=(draw(st.integers(1, 366)), draw(st.integers(0, 23)), draw(st.integers(0, 59))),  # type: ignore[arg-type]
        station=draw(station_ids()),
    )


# --- round trip -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, database=None)
@given(headers())
def test_parse_inverts_encode(header: SameHeader) -> None:
    text = header.encode()
    assert SameHeader.parse(text) == header
    assert SameHeader.parse(text).encode() == text
    assert text.startswith("ZCZC-") and text.endswith("-")
    assert len(header.station) == 8 and header.station == header.station_id.ljust(8)
    assert text.count("+") == 1


@pytest.mark.parametrize("text", REAL_HEADERS)
def test_real_headers_round_trip_exactly(text: str) -> None:
    header = SameHeader.parse(text)
    assert header.encode() == text


def test_fields_of_a_real_header() -> None:
    header = SameHeader.parse(REAL_HEADERS[0])
    assert header.org == "CIV" and header.org_name == "Civil authorities"
    assert header.event == "LEW" and header.event_name == "Law Enforcement Warning"
    assert header.locations == ("004013",)
    assert header.purge == timedelta(hours=10)
    assert header.issued == IssueTime(303, 23, 18)
    assert header.station == "WOLF/IP " and header.station_id == "WOLF/IP"
    assert header.issued_at(2024) == datetime(2024, 10, 29, 23, 18, tzinfo=UTC)
    assert header.expires_at(2024) == datetime(2024, 10, 30, 9, 18, tzinfo=UTC)


@pytest.mark.parametrize(
    ("code", "zone"),
    [("091162", "LSZ162"), ("092080", "LMZ080"), ("094460", "LCZ460"), ("096142", "LEZ142"),
     ("097042", "LOZ042"), ("098022", "SLZ022"), ("077250", "GMZ250")],
)  # fmt: skip
def test_great_lakes_and_offshore_marine_areas_are_valid_locations(code: str, zone: str) -> None:
    """A Special Marine Warning for a Great Lakes zone is a valid header (area numbers 91-98)."""
    text = f"ZCZC-WXR-SMW-{code}+0045-3291510-KCLE/NWS-"
    header = SameHeader.parse(text)
    assert header.locations == (code,)
    assert header.encode() == text
    assert same.MARINE_AREAS[int(code[1:3])] == zone[:2]


def test_short_station_id_is_kept_as_sent_when_parsed() -> None:
    header = SameHeader.parse(REAL_HEADERS[1])
    assert header.station == "WTSP/TV" and header.encode() == REAL_HEADERS[1]
    assert len(header.locations) == 5 and header.purge_code == "0030"
    built = SameHeader("EAS", "RWT", header.locations, (0, 30), header.issued, "WTSP/TV")
    assert built.station == "WTSP/TV " and built.encode().endswith("-WTSP/TV -")


# --- building -------------------------------------------------------------------------------


def test_build_from_a_datetime() -> None:
    eastern = timezone(timedelta(hours=-5))
    header = SameHeader.build(
        "WXR",
        "TOR",
        ["039173", "039051"],
        timedelta(minutes=45),
        "KCLE/NWS",
        issued=datetime(2024, 12, 31, 20, 30, 59, tzinfo=eastern),
    )
    # 20:30 EST on 31 December is 01:30 UTC on 1 January.
    assert header.issued == IssueTime(1, 1, 30)
    assert header.encode() == "ZCZC-WXR-TOR-039173-039051+0045-0010130-KCLE/NWS-"


def test_naive_datetime_is_taken_as_utc_and_leap_day_366() -> None:
    header = SameHeader("PEP", "EAN", ("000000",), (1, 0), datetime(2024, 12, 31, 23, 59), "A")
    assert header.issued == IssueTime(366, 23, 59)
    assert header.issued_code == "3662359" and header.station == "A       "
    assert header.issued_at(2024) == datetime(2024, 12, 31, 23, 59, tzinfo=UTC)
    with pytest.raises(ValueError, match="issue time: day 366 does not exist in 2023"):
        header.issued_at(2023)


def test_build_defaults_to_now() -> None:
    before = datetime.now(UTC).replace(second=0, microsecond=0)
    header = SameHeader.build("EAS", "RMT", ["000000"], (0, 15), "WXYZ/FM")
    issued = header.issued_at(before.year)
    if issued < before:  # the year turned between the two readings of the clock
        issued = header.issued_at(before.year + 1)
    assert timedelta(0) <= issued - before <= timedelta(minutes=1)


@pytest.mark.parametrize(
    ("purge", "code"),
    [((0, 15), "0015"), ((1, 0), "0100"), ((1, 30), "0130"), ((6, 0), "0600"), ((99, 30), "9930")],
)
def test_purge_codes(purge: tuple[int, int], code: str) -> None:
    header = SameHeader("WXR", "SVR", ("018097",), purge, (100, 12, 0), "KIND/NWS")  # type: ignore[arg-type]
    assert header.purge_code == code
    assert header.purge == timedelta(hours=purge[0], minutes=purge[1])


def test_event_table() -> None:
    for code, entry in EVENTS.items():
        assert len(code) == 3 and code.isupper() and code.isalpha()
        assert entry.category in {"national", "test", "weather", "non-weather", "administrative"}
        assert entry.name
    for code in ("EAN", "NIC", "NPT", "RMT", "RWT", "DMO", "TOR", "SVR", "CAE", "MEP", "EWW"):
        assert EVENTS[code].in_cfr
    assert EVENTS["RWT"].category == "test" and EVENTS["EAN"].category == "national"
    assert not EVENTS["EAT"].in_cfr and not EVENTS["TXB"].in_cfr
    assert set(ORIGINATORS) == {"EAS", "CIV", "WXR", "PEP"}
    assert same.is_eom("NNNN") and not same.is_eom("ZCZC")


# 47 CFR 11.31(e) as currently amended (2016: EWW, SSA, SSW; 2018: BLU; 2022: the national
# names; 2025: MEP).
CFR_EVENTS = {
    "EAN": "National Emergency Message",
    "NIC": "National Information Center",
    "NPT": "Nationwide Test of the Emergency Alert System",
    "RMT": "Required Monthly Test",
    "RWT": "Required Weekly Test",
    **dict.fromkeys(
        "ADR AVA AVW BLU BZW CAE CDW CEM CFA CFW DMO DSW EQW EVI EWW FFA FFS FFW FLA FLS FLW FRW "
        "HLS HMW HUA HUW HWA HWW LAE LEW MEP NMN NUW RHW SMW SPS SPW SSA SSW SVA SVR SVS TOA TOE "
        "TOR TRA TRW TSA TSW VOW WSA WSW".split(),
        None,
    ),
}


def test_event_table_follows_the_current_rule() -> None:
    assert {code for code, entry in EVENTS.items() if entry.in_cfr} == set(CFR_EVENTS)
    for code, name in CFR_EVENTS.items():
        if name is not None:
            assert EVENTS[code].name == name
    assert EVENTS["BLU"].name == "Blue Alert"
    assert EVENTS["MEP"].name == "Missing and Endangered Persons"
    assert EVENTS["EWW"].name == "Extreme Wind Warning"
    assert (EVENTS["SSA"].name, EVENTS["SSW"].name) == ("Storm Surge Watch", "Storm Surge Warning")
    # NWS-only codes read as the National Weather Service names them.
    assert EVENTS["SQW"].name == "Snow Squall Warning" and not EVENTS["SQW"].in_cfr
    assert EVENTS["NMN"].name == "Network Message Notification"


def test_originator_table_follows_the_current_rule() -> None:
    assert {code: org.name for code, org in ORIGINATORS.items()} == {
        "EAS": "EAS Participant",
        "CIV": "Civil authorities",
        "WXR": "National Weather Service",
        "PEP": "National Public Warning System",
    }


# --- malformed headers name their field -----------------------------------------------------


def unknown_code(known: dict[str, object]) -> st.SearchStrategy[str]:
    """Return three-letter codes that are not in ``known``."""
    letters = st.text(alphabet=string.ascii_uppercase, min_size=3, max_size=3)
    return letters.filter(lambda word: word not in known)


def _parts(header: SameHeader) -> dict[str, object]:
    return {
        "start": "ZCZC",
        "org": header.org,
        "event": header.event,
        "locations": list(header.locations),
        "purge": header.purge_code,
        "issued": header.issued_code,
        "station": header.station,
        "end": "-",
    }


def _join(parts: dict[str, object]) -> str:
    locations = "-".join(parts["locations"])  # type: ignore[arg-type]
    return (
        f"{parts['start']}-{parts['org']}-{parts['event']}-{locations}"
        f"+{parts['purge']}-{parts['issued']}-{parts['station']}{parts['end']}"
    )


def bad_start(draw: st.DrawFn, parts: dict[str, object]) -> str:
    parts["start"] = draw(st.sampled_from(["ZCZD", "zczc", "ZCZ", "NNNN", " ZCZC"]))
    return "start code"


def bad_org(draw: st.DrawFn, parts: dict[str, object]) -> str:
    parts["org"] = draw(
        st.one_of(
            unknown_code(ORIGINATORS),  # type: ignore[arg-type]
            st.sampled_from(["", "WX", "WXRR", "wxr", "123"]),
        )
    )
    return "originator"


def bad_event(draw: st.DrawFn, parts: dict[str, object]) -> str:
    parts["event"] = draw(
        st.one_of(
            unknown_code(EVENTS),  # type: ignore[arg-type]
            st.sampled_from(["", "TO", "TORR", "tor", "T0R"]),
        )
    )
    return "event"


def bad_location(draw: st.DrawFn, parts: dict[str, object]) -> str:
    locations: list[str] = parts["locations"]  # type: ignore[assignment]
    index = draw(st.integers(0, len(locations) - 1))
    locations[index] = draw(
        st.one_of(
            st.sampled_from(["", "03917", "0391730", "03917A", "O39173", " 39173", "0391.3"]),
            st.builds(
                lambda p, s, c: f"{p}{s}{c:03d}",
                st.integers(0, 9),
                st.integers(79, 99).filter(lambda area: area not in same.MARINE_AREAS),
                st.integers(0, 999),
            ),
        )
    )
    return f"location code {index + 1}"


def too_many_locations(draw: st.DrawFn, parts: dict[str, object]) -> str:
    locations: list[str] = parts["locations"]  # type: ignore[assignment]
    parts["locations"] = (locations * 32)[: draw(st.integers(32, 40))]
    return "locations"


def bad_purge(draw: st.DrawFn, parts: dict[str, object]) -> str:
    parts["purge"] = draw(
        st.one_of(
            st.sampled_from(
                [
                    "0000",
                    "0010",
                    "0020",
                    "0100 ",
                    "015",
                    "00015",
                    "0A30",
                    "0060",
                    "0075",
                    "9945",
                    "9960",
                    "0145",
                    "0115",
                    "1015",
                ]
            ),
            st.builds(
                lambda m: f"{m // 60:02d}{m % 60:02d}",
                st.integers(61, 99 * 60 + 59).filter(lambda m: m % 30),
            ),
        )
    )
    return "purge time"


def bad_issued(draw: st.DrawFn, parts: dict[str, object]) -> str:
    parts["issued"] = draw(
        st.one_of(
            st.builds(lambda d: f"{d:03d}1200", st.sampled_from([0, *range(367, 1000)])),
            st.builds(lambda h: f"100{h:02d}00", st.integers(24, 99)),
            st.builds(lambda m: f"10012{m:02d}", st.integers(60, 99)),
            st.sampled_from(["100120", "10012000", "10O1200", ""]),
        )
    )
    return "issue time"


def bad_station(draw: st.DrawFn, parts: dict[str, object]) -> str:
    choice = draw(st.integers(0, 5))
    if choice == 0:
        parts["station"] = "KCLE/NWS9"  # nine characters
    elif choice == 1:
        parts["station"] = draw(st.sampled_from(["KCLE-NWS", "-KCLENWS", "KCLE NW-"]))
    elif choice == 2:
        parts["station"] = draw(st.sampled_from(["        ", "", " KCLE   "]))
    elif choice == 3:
        parts["station"] = draw(st.sampled_from(["KCLÉ/NWS", "KCLE\tNWS", "KCLE\x00   "]))
    elif choice == 4:
        parts["end"] = draw(st.sampled_from(["", "--", "- "]))
    else:
        parts["station"] = str(parts["station"]) + "-EXTRA"
    return "station id"


MUTATIONS = [
    bad_start,
    bad_org,
    bad_event,
    bad_location,
    too_many_locations,
    bad_purge,
    bad_issued,
    bad_station,
]


@settings(max_examples=400, deadline=None, database=None)
@given(header=headers(), mutate=st.sampled_from(MUTATIONS), data=st.data())
def test_every_malformed_field_is_named(
    header: SameHeader, mutate: Callable[[st.DrawFn, dict[str, object]], str], data: st.DataObject
) -> None:
    parts = _parts(header)
    field = mutate(data.draw, parts)
    text = _join(parts)
    with pytest.raises(ValueError) as excinfo:
        SameHeader.parse(text)
    assert str(excinfo.value).startswith(f"{field}: "), (text, str(excinfo.value))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ZCZC-WXR-TOR+0030-1241720-KCLE/NWS-", "locations: at least one"),
        ("ZCZC-WXR+0030-1241720-KCLE/NWS-", "header: expected ORG-EEE-PSSCCC"),
        ("ZCZC-WXR-TOR-039173-0030-1241720-KCLE/NWS-", "header: expected exactly one '+'"),
        ("ZCZC-WXR-TOR-039173+0030-1241720-KCLE/NWS-+", "header: expected exactly one '+'"),
        ("ZCZC-WXR-TOR-039173+0030-1241720-KCLE/NWS-\n", "station id:"),
        ("ZCZC-WXR-TOR-039173-039173-039173-03917+0030-1241720-KCLE/NWS-", "location code 4:"),
        ("ZCZC-WXR-TOR-039173+0030-1241720", "station id:"),
        ("ZCZC-WXR-TOR-039173+0030", "issue time:"),
    ],
)
def test_structural_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        SameHeader.parse(text)


def test_parse_rejects_non_text() -> None:
    with pytest.raises(ValueError, match="^header: expected a str"):
        SameHeader.parse(b"ZCZC")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"org": "XYZ"}, "originator: expected one of EAS, CIV, WXR, PEP"),
        ({"org": None}, "originator:"),
        ({"event": "XYZ"}, "event: unknown event code 'XYZ'"),
        ({"locations": "039173"}, "locations: expected a tuple"),
        ({"locations": ()}, "locations: a header carries 1-31"),
        ({"locations": ("039173", 39173)}, "location code 2: expected six digits"),
        (
            {"locations": ("099173",)},
            "location code 1: state FIPS code must be 00-78 or a marine area",
        ),
        ({"purge": (0, 10)}, "purge time: must be in 15-minute steps"),
        ({"purge": (1, 15)}, "purge time: must be in 15-minute steps"),
        ({"purge": (0, 0)}, "purge time: must be a positive"),
        ({"purge": (100, 0)}, "purge time: 100 h 0 min is out of range"),
        ({"purge": (99, 45)}, "purge time: must be at most 99 h 30 min"),
        ({"purge": timedelta(minutes=15, seconds=1)}, "purge time: must be a positive whole"),
        ({"purge": (0.25, 0)}, "purge time: hours and minutes must be ints"),
        ({"purge": 30}, "purge time: expected a timedelta"),
        ({"issued": (0, 0, 0)}, "issue time: Julian day must be 001-366"),
        ({"issued": (1, 24, 0)}, "issue time: hour must be 00-23"),
        ({"issued": (1, 0, 60)}, "issue time: minute must be 00-59"),
        ({"issued": (1, 0)}, "issue time: expected a datetime"),
        ({"issued": (1.0, 0, 0)}, "issue time: day, hour and minute must be ints"),
        ({"station": "KCLE/NWSX"}, "station id: at most 8 characters"),
        ({"station": "KCLE-NWS"}, "station id: may not contain '-'"),
        ({"station": " KCLE"}, "station id: must start with a non-space"),
        ({"station": ""}, "station id: must start with a non-space"),
        ({"station": "KCLE+"}, "station id: character '\\+' is not allowed"),
        ({"station": 7}, "station id: expected a str"),
    ],
)
def test_constructor_names_the_bad_field(kwargs: dict[str, object], message: str) -> None:
    values: dict[str, object] = {
        "org": "WXR",
        "event": "TOR",
        "locations": ("039173",),
        "purge": (0, 30),
        "issued": (124, 17, 20),
        "station": "KCLE/NWS",
        **kwargs,
    }
    with pytest.raises(ValueError, match=f"^{message}"):
        SameHeader(**values)  # type: ignore[arg-type]


def test_header_is_frozen_and_hashable() -> None:
    header = SameHeader.parse(REAL_HEADERS[0])
    with pytest.raises(AttributeError):
        header.org = "WXR"  # type: ignore[misc]
    assert {header: 1}[SameHeader.parse(REAL_HEADERS[0])] == 1
    assert str(header) == REAL_HEADERS[0]


@given(st.integers(min_value=1, max_value=7000 * 60))
def test_round_up_purge_is_the_shortest_legal_purge_at_least_as_long(seconds: int) -> None:
    duration = timedelta(seconds=seconds)
    purge = same.round_up_purge(duration)
    SameHeader.build("WXR", "TOR", ["048439"], purge, "KXYZ/NWS", issued=(1, 0, 0))  # legal
    if duration >= same.MAX_PURGE:
        assert purge == same.MAX_PURGE
        return
    assert purge >= duration
    minutes = int(purge.total_seconds() // 60)
    shorter = timedelta(minutes=minutes - same.purge_step(minutes - 1))
    assert shorter < duration  # the next legal purge down would be too short
