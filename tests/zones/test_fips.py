"""County FIPS table and subdivision index from the partial-counties file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine

from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.county_snapshot import bundled_county_index
from alertstation.zones.fips import County, county_for, describe_same_code, load_county_index
from alertstation.zones.service import apply_files
from tests.support import clear_tables
from tests.zones.zonefiles import PARTIAL, require_shared_data

CASES = [
    ("023029", "Washington, ME"),
    ("027053", "Hennepin, MN"),
    ("527053", "Central Hennepin (part of Hennepin, MN)"),
    ("427137", "West Central St. Louis (part of St. Louis, MN)"),
    ("630019", "Part 6 of Daniels, MT"),  # the file names this part after the county itself
    # Counties the file draws as several whole-county rows, each naming its own piece.
    ("015007", "Kauai, HI"),  # first row: "Niihau in Kauai"
    ("015009", "Maui, HI"),  # first row: "Kahoolawe in Maui"
    ("012087", "Monroe, FL"),  # first row: "Mainland Monroe"
    ("036061", "New York, NY"),  # also "New York (Manhattan)"
    ("327053", "Northeast Hennepin (part of Hennepin, MN)"),
    ("227053", "Part 2 of Hennepin, MN"),  # a part the file does not define
    ("027000", "All of MN"),
    ("000000", "United States"),
    ("099999", None),
    ("12345", None),
    ("ABCDEF", None),
]


@pytest.fixture
def counties(engine: Engine) -> Iterator[Engine]:
    require_shared_data()
    apply_files(engine, {"partial": PARTIAL})
    yield engine
    clear_tables(engine)


@pytest.mark.parametrize(("code", "expected"), CASES)
def test_describe_same_code_with_a_connection(
    counties: Engine, code: str, expected: str | None
) -> None:
    with counties.connect() as conn:
        assert describe_same_code(conn, code) == expected


def test_describe_same_code_with_the_catalog_agrees(counties: Engine) -> None:
    catalog = ZoneCatalog(counties)
    with counties.connect() as conn:
        for code, expected in CASES:
            assert describe_same_code(catalog, code) == expected == describe_same_code(conn, code)


def test_county_for(counties: Engine) -> None:
    with counties.connect() as conn:
        assert county_for(conn, "27053") == County("27053", "MN", "Hennepin")
        assert county_for(conn, "99999") is None
    assert county_for(ZoneCatalog(counties), "23029") == County("23029", "ME", "Washington")


def test_other_sources_are_refused(conn: Connection) -> None:
    with pytest.raises(TypeError):
        describe_same_code(object(), "023029")


def test_the_bundled_county_names_are_what_a_sync_of_the_file_gives(counties: Engine) -> None:
    """A fresh station names every county and part as a station that synced the file does."""
    with counties.connect() as conn:
        synced = load_county_index(conn)
    bundled = bundled_county_index()
    assert bundled.counties == synced.counties
    assert bundled.subdivisions == synced.subdivisions
    assert bundled.counties["27053"] == County("27053", "MN", "Hennepin")  # drawn only as parts
