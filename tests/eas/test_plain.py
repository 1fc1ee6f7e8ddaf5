"""Plain-language text of SAME headers (eas/plain.py), as ENDECs print it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine

from alertstation.eas.plain import PlainLanguage, issued_moment, join_places, plain_text
from alertstation.same import EVENTS, ORIGINATORS, SameHeader
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.fips import County, CountyIndex
from alertstation.zones.loader import ZoneRecord
from alertstation.zones.places import PlaceNames, marine_zone_code
from alertstation.zones.service import sync_catalog
from tests.support import clear_tables

EASTERN = ZoneInfo("America/New_York")
# 2026-11-29 03:21 UTC is day 333 and 10:21 PM EST on November 28.
NEAR = datetime(2026, 11, 29, 3, 30, tzinfo=UTC)
TORNADO = "ZCZC-WXR-TOR-039137-039003+0030-3330321-WUXT/FM-"

OHIO = CountyIndex(
    counties={
        "39137": County("39137", "OH", "Putnam"),
        "39003": County("39003", "OH", "Allen"),
        "27053": County("27053", "MN", "Hennepin"),
    },
    subdivisions={"527053": "Central Hennepin", "627053": "Hennepin"},
)
PLACES = PlaceNames(bundled=OHIO)

# Every event code and the words the text must use for it: 47 CFR 11.31(e) as amended, then
# the codes only NOAA Weather Radio sends, as the National Weather Service names them.
EVENT_WORDS = {
    "EAN": "a National Emergency Message",
    "NIC": "a National Information Center",
    "NPT": "a Nationwide Test of the Emergency Alert System",
    "RMT": "a Required Monthly Test",
    "RWT": "a Required Weekly Test",
    "ADR": "an Administrative Message",
    "AVA": "an Avalanche Watch",
    "AVW": "an Avalanche Warning",
    "BLU": "a Blue Alert",
    "BZW": "a Blizzard Warning",
    "CAE": "a Child Abduction Emergency",
    "CDW": "a Civil Danger Warning",
    "CEM": "a Civil Emergency Message",
    "CFA": "a Coastal Flood Watch",
    "CFW": "a Coastal Flood Warning",
    "DMO": "a Practice/Demo Warning",
    "DSW": "a Dust Storm Warning",
    "EQW": "an Earthquake Warning",
    "EVI": "an Evacuation Immediate",
    "EWW": "an Extreme Wind Warning",
    "FFA": "a Flash Flood Watch",
    "FFS": "a Flash Flood Statement",
    "FFW": "a Flash Flood Warning",
    "FLA": "a Flood Watch",
    "FLS": "a Flood Statement",
    "FLW": "a Flood Warning",
    "FRW": "a Fire Warning",
    "HLS": "a Hurricane Statement",
    "HMW": "a Hazardous Materials Warning",
    "HUA": "a Hurricane Watch",
    "HUW": "a Hurricane Warning",
    "HWA": "a High Wind Watch",
    "HWW": "a High Wind Warning",
    "LAE": "a Local Area Emergency",
    "LEW": "a Law Enforcement Warning",
    "MEP": "a Missing and Endangered Persons",
    "NMN": "a Network Message Notification",
    "NUW": "a Nuclear Power Plant Warning",
    "RHW": "a Radiological Hazard Warning",
    "SMW": "a Special Marine Warning",
    "SPS": "a Special Weather Statement",
    "SPW": "a Shelter in Place Warning",
    "SSA": "a Storm Surge Watch",
    "SSW": "a Storm Surge Warning",
    "SVA": "a Severe Thunderstorm Watch",
    "SVR": "a Severe Thunderstorm Warning",
    "SVS": "a Severe Weather Statement",
    "TOA": "a Tornado Watch",
    "TOE": "a 911 Telephone Outage Emergency",
    "TOR": "a Tornado Warning",
    "TRA": "a Tropical Storm Watch",
    "TRW": "a Tropical Storm Warning",
    "TSA": "a Tsunami Watch",
    "TSW": "a Tsunami Warning",
    "VOW": "a Volcano Warning",
    "WSA": "a Winter Storm Watch",
    "WSW": "a Winter Storm Warning",
    # NWS-only codes.
    "EAT": "an Emergency Action Termination",
    "NAT": "a National Audible Test",
    "NST": "a National Silent Test",
    "SQW": "a Snow Squall Warning",
    "TXB": "a Transmitter Backup On",
    "TXF": "a Transmitter Carrier Off",
    "TXO": "a Transmitter Carrier On",
    "TXP": "a Transmitter Primary On",
}

ISSUERS = {
    "EAS": "An EAS Participant has issued",
    "CIV": "The civil authorities have issued",
    "WXR": "The National Weather Service has issued",
    "PEP": "The National Public Warning System has issued",
}


def header(org: str = "WXR", event: str = "TOR", *codes: str, purge: int = 30) -> SameHeader:
    return SameHeader(
        org, event, codes or ("039137",), timedelta(minutes=purge), (333, 3, 21), "WUXT/FM"
    )


def test_the_example_reads_as_endecs_print_it() -> None:
    assert plain_text(TORNADO, PLACES, time_zone=EASTERN, near=NEAR) == (
        "The National Weather Service has issued a Tornado Warning for Putnam, OH and Allen, OH "
        "beginning at 10:21 PM and ending at 10:51 PM EST. Message from WUXT/FM."
    )


def test_every_event_code_has_its_words() -> None:
    assert set(EVENT_WORDS) == set(EVENTS)


@pytest.mark.parametrize("event", sorted(EVENT_WORDS))
def test_every_event_code_reads_in_words(event: str) -> None:
    text = plain_text(header("CIV", event), PLACES, near=NEAR)
    assert text == (
        f"The civil authorities have issued {EVENT_WORDS[event]} for Putnam, OH beginning at "
        "3:21 AM and ending at 3:51 AM UTC. Message from WUXT/FM."
    )
    assert event not in text.replace("WUXT/FM", "")


@pytest.mark.parametrize("org", sorted(ORIGINATORS))
def test_every_originator_reads_in_words(org: str) -> None:
    assert set(ISSUERS) == set(ORIGINATORS)
    text = plain_text(header(org, "RMT"), PLACES, near=NEAR)
    assert text.startswith(f"{ISSUERS[org]} a Required Monthly Test for Putnam, OH ")


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("000000", "the United States"),
        ("039000", "all of Ohio"),
        ("011000", "all of the District of Columbia"),
        ("072000", "all of Puerto Rico"),
        ("539000", "Central Ohio"),
        ("039137", "Putnam, OH"),
        ("139137", "Northwest Putnam, OH"),
        ("239137", "North Putnam, OH"),
        ("339137", "Northeast Putnam, OH"),
        ("439137", "West Putnam, OH"),
        ("539137", "Central Putnam, OH"),
        ("639137", "East Putnam, OH"),
        ("739137", "Southwest Putnam, OH"),
        ("839137", "South Putnam, OH"),
        ("939137", "Southeast Putnam, OH"),
        ("527053", "Central Hennepin, MN"),  # the table names this part
        ("627053", "East Hennepin, MN"),  # named after the county itself: the direction
        ("039999", "039999"),  # a county nobody knows stays a code
        ("073530", "073530"),  # a marine zone with no catalog stays a code
        ("099000", "099000"),
    ],
)
def test_location_codes_in_words(code: str, words: str) -> None:
    assert PLACES.describe(code) == words


def test_places_are_joined_so_each_comma_stays_clear() -> None:
    assert join_places(["Putnam, OH"]) == "Putnam, OH"
    assert join_places(["Putnam, OH", "Allen, OH"]) == "Putnam, OH and Allen, OH"
    assert join_places(["A, OH", "B, OH", "C, OH"]) == "A, OH; B, OH; and C, OH"
    text = plain_text(header("WXR", "SVR", "039137", "039003", "000000"), PLACES, near=NEAR)
    assert "for Putnam, OH; Allen, OH; and the United States beginning" in text


def test_a_message_that_ends_on_another_day_names_both_dates() -> None:
    text = plain_text(header("WXR", "WSW", purge=6 * 60), PLACES, time_zone=EASTERN, near=NEAR)
    assert "beginning at 10:21 PM on November 28 and ending at 4:21 AM EST on November 29." in text


def test_a_change_of_offset_names_both_zones() -> None:
    # 2026-11-01 05:30 UTC is 1:30 AM EDT; four hours later it is 4:30 AM EST.
    fall_back = SameHeader("WXR", "HWW", ("039137",), (4, 0), (305, 5, 30), "KCLE/NWS")
    text = plain_text(fall_back, PLACES, time_zone=EASTERN, near=datetime(2026, 11, 1, tzinfo=UTC))
    assert "beginning at 1:30 AM EDT and ending at 4:30 AM EST." in text


def test_the_year_is_the_one_nearest_the_message() -> None:
    late = SameHeader("WXR", "TOR", ("039137",), (0, 30), (365, 23, 50), "KCLE/NWS")
    received = datetime(2027, 1, 1, 0, 5, tzinfo=UTC)
    assert issued_moment(late, received) == datetime(2026, 12, 31, 23, 50, tzinfo=UTC)
    early = SameHeader("WXR", "TOR", ("039137",), (0, 30), (1, 0, 10), "KCLE/NWS")
    assert issued_moment(early, datetime(2026, 12, 31, 23, 59, tzinfo=UTC)).year == 2027


def test_header_text_that_does_not_parse_is_refused() -> None:
    with pytest.raises(ValueError, match="purge time"):
        plain_text("ZCZC-WXR-TOR-039137+0000-3330321-WUXT/FM-", PLACES, near=NEAR)
    language = PlainLanguage(PLACES, EASTERN)
    assert language.text_or_none("ZCZC-WXR-TOR-039137+0000-3330321-WUXT/FM-") is None
    assert language.text_or_none(TORNADO, near=NEAR) == plain_text(
        TORNADO, PLACES, time_zone=EASTERN, near=NEAR
    )


def test_the_bundled_snapshot_names_counties_before_any_sync() -> None:
    fresh = PlaceNames()  # no catalog: the snapshot shipped in the package
    assert fresh.describe("039137") == "Putnam, OH"
    assert fresh.describe("039003") == "Allen, OH"
    assert fresh.describe("527053") == "Central Hennepin, MN"
    assert fresh.describe("227053") == "North Hennepin, MN"


def test_marine_codes_name_their_zone() -> None:
    assert marine_zone_code("073530") == "ANZ530"
    assert marine_zone_code("096142") == "LEZ142"
    assert marine_zone_code("097042") == "LOZ042"
    assert marine_zone_code("098022") == "SLZ022"
    assert marine_zone_code("095142") is None  # no marine area is numbered 95
    assert marine_zone_code("039137") is None
    assert marine_zone_code("073000") is None


MARINE = ZoneRecord(
    zone_code="ANZ530",
    state_code="AN",
    zone_number="530",
    cwa="LWX",
    time_zone="",
    fe_area="",
    name="Chesapeake Bay north of Pooles Island",
    state_zone="",
    longitude=None,
    latitude=None,
    short_name="",
    zone_type="marine",
)


@pytest.fixture
def marine_catalog(engine: Engine) -> Iterator[ZoneCatalog]:
    from alertstation.db.engine import begin_write

    with begin_write(engine) as conn:
        sync_catalog(conn, {"marine": [MARINE]})
    yield ZoneCatalog(engine)
    clear_tables(engine)


def test_marine_zones_read_with_the_catalog_names(marine_catalog: ZoneCatalog) -> None:
    places = PlaceNames(marine_catalog, bundled=OHIO)
    assert places.describe("073530") == "Chesapeake Bay north of Pooles Island"
    assert places.describe("073531") == "073531"
    assert places.describe("039137") == "Putnam, OH"  # the snapshot fills the synced gaps
    text = plain_text(header("WXR", "SMW", "073530"), places, near=NEAR)
    assert "a Special Marine Warning for Chesapeake Bay north of Pooles Island beginning" in text
