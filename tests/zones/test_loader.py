"""Reading the agency's zone DBFs (and broken or foreign ones) into records."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import dbfread
import pytest

from alertstation.zones.loader import (
    CountySubdivision,
    ZoneRecord,
    detect_family,
    load_dbf,
    load_partial_counties,
    read_columns,
    settle_county_names,
)
from tests.zones.zonefiles import (
    LAND,
    LAND_CODES,
    LAND_RECORDS,
    MARINE,
    MARINE_FIELDS,
    MARINE_RECORDS,
    PARTIAL,
    PARTIAL_RECORDS,
    PUBLIC_FIELDS,
    copy_shared,
    public_row,
    require_shared_data,
    write_dbf,
)

UGC = re.compile(r"^[A-Z]{2}Z\d{3}$")


@pytest.fixture(autouse=True)
def _shared_data() -> None:
    require_shared_data()


def test_land_file_gives_every_record_as_a_public_zone() -> None:
    records = load_dbf(LAND)
    assert len(records) == LAND_RECORDS
    assert len({r.zone_code for r in records}) == LAND_CODES
    assert {r.zone_type for r in records} == {"public"}
    assert all(UGC.match(r.zone_code) for r in records)
    assert all(r.zone_code == f"{r.state_code}Z{r.zone_number}" for r in records)
    calhoun = next(r for r in records if r.zone_code == "ALZ019")
    assert calhoun == ZoneRecord(
        zone_code="ALZ019",
        state_code="AL",
        zone_number="019",
        cwa="BMX",
        time_zone="C",
        fe_area="ec",
        name="Calhoun",
        state_zone="AL019",
        longitude=pytest.approx(-85.8261),  # type: ignore[arg-type]
        latitude=pytest.approx(33.7714),  # type: ignore[arg-type]
        short_name="Calhoun",
        zone_type="public",
    )


def test_names_longer_than_the_documented_width_are_kept_whole() -> None:
    records = load_dbf(LAND)
    longest = max(records, key=lambda r: len(r.name))
    assert len(longest.name) > 70  # the spec says NAME C(70); the real file has C(254)
    assert longest.name == longest.name.strip() and "\x00" not in longest.name


def test_marine_file_maps_id_wfo_and_gl_wfo() -> None:
    records = load_dbf(MARINE)
    assert len(records) == MARINE_RECORDS
    assert {r.zone_type for r in records} == {"marine"}
    assert all(r.name for r in records), "every marine zone has a name"
    kauai = next(r for r in records if r.zone_code == "PHZ113")
    assert (kauai.state_code, kauai.zone_number, kauai.cwa) == ("PH", "113", "HFO")
    assert kauai.name == "Kauai Channel"
    assert (kauai.time_zone, kauai.fe_area, kauai.state_zone, kauai.short_name) == ("",) * 4
    lake = next(r for r in records if r.zone_code == "LMZ779")
    assert lake.cwa == "MKX", "GL_WFO wins over WFO when it is filled"
    assert {r.state_code for r in records} >= {"GM", "AM", "PH", "PK", "LM"}


def test_partial_counties_file_needs_the_tolerant_parser() -> None:
    with pytest.raises(ValueError):
        list(dbfread.DBF(str(PARTIAL)))  # stock dbfread chokes on the NUL-padded numbers
    records = load_partial_counties(PARTIAL)
    assert len(records) == PARTIAL_RECORDS
    for record in records:
        assert record.latitude is not None and record.longitude is not None
        assert -15.0 <= record.latitude <= 72.0, record
        assert -180.0 <= record.longitude <= 146.0, record
        assert record.same_code[1:] == record.county_fips
    washington = next(r for r in records if r.same_code == "023029")
    assert (washington.state_code, washington.county_name, washington.cwa) == (
        "ME",
        "Washington",
        "CAR",
    )
    assert washington.longitude == pytest.approx(-67.6361)
    assert washington.latitude == pytest.approx(45.0363)
    hennepin = next(r for r in records if r.same_code == "527053")
    assert (hennepin.part, hennepin.area_name, hennepin.county_name) == (
        5,
        "Central Hennepin",
        "Hennepin",
    )
    assert hennepin.latitude == pytest.approx(45.0045)


def test_whole_county_rows_of_a_county_in_pieces_carry_the_county_name() -> None:
    records = load_partial_counties(PARTIAL)
    whole = {}
    for record in records:
        if record.part == 0:
            whole.setdefault(record.same_code, set()).add(record.county_name)
    assert whole["015007"] == {"Kauai"}
    assert whole["015009"] == {"Maui"}
    assert whole["012087"] == {"Monroe"}
    assert whole["036061"] == {"New York"}
    assert all(len(names) == 1 for names in whole.values())
    pieces = {r.area_name for r in records if r.same_code == "015007"}
    assert pieces == {"Niihau in Kauai", "Kauai in Kauai"}, "each row keeps its own piece name"


def _county_row(same: str, name: str) -> CountySubdivision:
    return CountySubdivision(same, same[1:], "XX", name, name, "", "", "", None, None)


def test_settled_county_name_prefers_the_numbered_parts_then_the_shared_ending() -> None:
    rows = [
        _county_row("099001", "North Isle in Bay"),
        _county_row("099001", "Bay (Mainland)"),
        _county_row("099003", "Alpha Rock in Cove"),
        _county_row("099003", "Beta Rock in Cove"),
        _county_row("199003", "Cove County Proper"),  # a numbered part names the county
        _county_row("099005", "Same"),
        _county_row("099005", "Same"),
    ]
    rows[4] = replace(rows[4], county_name="Cove Parish")
    settled = settle_county_names(rows)
    names = [r.county_name for r in settled]
    assert names == ["Bay", "Bay", "Cove Parish", "Cove Parish", "Cove Parish", "Same", "Same"]
    assert [r.area_name for r in settled] == [r.area_name for r in rows]
    assert settle_county_names([]) == []


def test_fire_weather_file_uses_the_public_schema(tmp_path: Path) -> None:
    fire = copy_shared(LAND, tmp_path / "fz_18mr25.dbf")
    records = load_dbf(fire)
    assert len(records) == LAND_RECORDS
    assert {r.zone_type for r in records} == {"fire"}
    assert detect_family(fire) == "fire"


def test_family_detection_reads_column_names() -> None:
    assert detect_family(LAND) == "public"
    assert detect_family(MARINE) == "marine"
    assert detect_family(PARTIAL) == "partial"
    assert read_columns(MARINE) == ["ID", "WFO", "GL_WFO", "NAME", "LON", "LAT"]


def test_foreign_columns_are_refused_with_the_columns_found(tmp_path: Path) -> None:
    path = write_dbf(
        tmp_path / "z_01ja25.dbf",
        [("FOO", "C", 4, 0), ("BAR", "N", 8, 2)],
        [{"FOO": "x", "BAR": 1.5}],
    )
    with pytest.raises(ValueError, match=r"^Unrecognised zone DBF schema") as info:
        load_dbf(path)
    assert "FOO, BAR" in str(info.value)
    with pytest.raises(ValueError, match=r"^Unrecognised zone DBF schema"):
        detect_family(path)


def test_partial_counties_file_is_not_a_zone_file() -> None:
    with pytest.raises(ValueError, match=r"^Unrecognised zone DBF schema.*AREA_SAME"):
        load_dbf(PARTIAL)
    with pytest.raises(ValueError, match="partial-counties DBF schema"):
        load_partial_counties(LAND)


@pytest.mark.parametrize("keep", [10, 200, 5000, 1_432_025 - 348])
def test_truncated_copy_is_refused_naming_the_file(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "z_18mr25.dbf"
    path.write_bytes(LAND.read_bytes()[:keep])
    with pytest.raises(ValueError, match="z_18mr25.dbf"):
        load_dbf(path)


def test_missing_file_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read zone DBF"):
        load_dbf(tmp_path / "z_01ja25.dbf")


def test_blank_and_nul_padded_numbers_and_absent_columns(tmp_path: Path) -> None:
    path = write_dbf(
        tmp_path / "z_02ja25.dbf",
        [("STATE", "C", 2, 0), ("ZONE", "C", 3, 0), ("NAME", "C", 40, 0), *PUBLIC_FIELDS[7:9]],
        [
            public_row("tx", "1", "Blank", LON=None, LAT=b"\x00" * 19),
            public_row("TX", "042", "Padded", LON=b"-97.5\x00\x00\x00", LAT=b"   ***   "),
            public_row("TX", "43", "Plain", LON=-97.25, LAT=30.5),
        ],
    )
    blank, padded, plain = load_dbf(path)
    assert (blank.zone_code, blank.zone_number, blank.longitude, blank.latitude) == (
        "TXZ001",
        "001",
        None,
        None,
    )
    assert (blank.cwa, blank.time_zone, blank.fe_area, blank.state_zone, blank.short_name) == (
        "",
    ) * 5
    assert (padded.longitude, padded.latitude) == (-97.5, None)
    assert (plain.zone_code, plain.longitude, plain.latitude) == ("TXZ043", -97.25, 30.5)


def test_record_without_a_valid_code_is_refused(tmp_path: Path) -> None:
    path = write_dbf(
        tmp_path / "z_02ja25.dbf", PUBLIC_FIELDS, [public_row("TX", "001", "Fine"), {"NAME": "x"}]
    )
    with pytest.raises(ValueError, match=r"z_02ja25.dbf: record 2 .*'Z'"):
        load_dbf(path)


def test_marine_file_without_optional_columns(tmp_path: Path) -> None:
    path = write_dbf(
        tmp_path / "mz01ja25.dbf",
        [MARINE_FIELDS[0], MARINE_FIELDS[3]],
        [{"ID": "anz800", "NAME": "Gulf of Maine"}],
    )
    (record,) = load_dbf(path)
    assert (record.zone_code, record.state_code, record.zone_number) == ("ANZ800", "AN", "800")
    assert (record.cwa, record.longitude) == ("", None)


def test_progress_reports_reach_the_total() -> None:
    seen: list[tuple[int, int]] = []
    load_dbf(MARINE, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (MARINE_RECORDS, MARINE_RECORDS)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
