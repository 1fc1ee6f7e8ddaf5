"""Syncing the catalog: whole families in one transaction, failures leave the old catalog."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, Table, func, select

from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write, read_generation
from alertstation.zones import service
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.loader import ZoneRecord, load_dbf, load_partial_counties
from alertstation.zones.service import (
    apply_files,
    count_zones,
    ensure_catalog,
    read_sources,
    sync_catalog,
)
from alertstation.zones.tables import county_fips, county_subdivisions, wx_zones
from tests.support import clear_tables, make_settings
from tests.zones.zonefiles import (
    LAND,
    LAND_CODES,
    LAND_RECORDS,
    MARINE,
    MARINE_RECORDS,
    PARTIAL,
    copy_shared,
    require_shared_data,
    write_dbf,
)


@pytest.fixture(scope="module")
def land() -> list[ZoneRecord]:
    require_shared_data()
    return load_dbf(LAND)


@pytest.fixture(scope="module")
def marine() -> list[ZoneRecord]:
    require_shared_data()
    return load_dbf(MARINE)


@pytest.fixture
def committed(engine: Engine) -> Iterator[Engine]:
    """The session database for a test that commits; emptied afterwards."""
    yield engine
    clear_tables(engine)


def rows(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def snapshot(engine: Engine) -> tuple[int, int, int, int]:
    with engine.connect() as conn:
        return (
            count_zones(conn, "public"),
            count_zones(conn, "marine"),
            count_zones(conn, "fire"),
            read_generation(conn, "zones"),
        )


def test_land_and_marine_sync_makes_every_record_resolvable(
    conn: Connection, land: list[ZoneRecord], marine: list[ZoneRecord]
) -> None:
    report = sync_catalog(
        conn, {"public": land, "marine": marine}, sources={"public": LAND, "marine": MARINE}
    )
    assert report.counts == {"public": LAND_CODES, "marine": MARINE_RECORDS}
    assert report.records == {"public": LAND_RECORDS, "marine": MARINE_RECORDS}
    assert report.paths == {"public": LAND, "marine": MARINE}
    assert report.generation == read_generation(conn, "zones") >= 1
    codes = set(conn.execute(select(wx_zones.c.zone_code)).scalars())
    assert {r.zone_code for r in land} | {r.zone_code for r in marine} <= codes
    names = dict(
        conn.execute(
            select(wx_zones.c.zone_code, wx_zones.c.name).where(wx_zones.c.zone_type == "marine")
        ).all()
    )
    assert len(names) == MARINE_RECORDS and all(names.values())
    sources = read_sources(conn)
    assert sources["public"].file_name == "z_18mr25.dbf"
    assert (sources["public"].record_count, sources["public"].row_count) == (4114, 4026)
    assert len(sources["marine"].sha256) == 64
    assert report.lines()[0].startswith("public: 4026 zones (88 extra part")


def test_public_and_fire_weather_files_load_together(
    conn: Connection, land: list[ZoneRecord], tmp_path: Path
) -> None:
    fire_path = copy_shared(LAND, tmp_path / "fz_18mr25.dbf")
    data = bytearray(fire_path.read_bytes())
    first_fe_area = 353 + 1 + 2 + 9 + 2  # header, deletion flag, STATE, CWA, TIME_ZONE
    data[first_fe_area : first_fe_area + 2] = b"zz"
    fire_path.write_bytes(bytes(data))
    fire = load_dbf(fire_path)
    report = sync_catalog(conn, {"public": land, "fire": fire})
    assert report.counts == {"public": LAND_CODES, "fire": LAND_CODES}
    assert count_zones(conn) == 2 * LAND_CODES
    fire_row = conn.execute(
        select(wx_zones.c.fe_area).where(
            wx_zones.c.zone_code == "ALZ019", wx_zones.c.zone_type == "fire"
        )
    ).scalar_one()
    assert fire_row == "zz"


def test_syncing_one_family_leaves_the_others_alone(
    conn: Connection, land: list[ZoneRecord], marine: list[ZoneRecord]
) -> None:
    sync_catalog(conn, {"public": land, "marine": marine})
    generation = read_generation(conn, "zones")
    sync_catalog(conn, {"marine": marine[:10]})
    assert (count_zones(conn, "public"), count_zones(conn, "marine")) == (LAND_CODES, 10)
    assert read_generation(conn, "zones") == generation + 1


def test_partial_counties_fill_the_fips_tables(conn: Connection) -> None:
    require_shared_data()
    report = sync_catalog(conn, {"partial": load_partial_counties(PARTIAL)})
    assert report.details["partial"] == "3233 counties, 71 subdivisions"
    assert (rows(conn, county_fips), rows(conn, county_subdivisions)) == (3233, 71)
    assert count_zones(conn) == 0


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ({}, "no zone families"),
        ({"offshore": []}, "unknown zone family"),
        ({"public": []}, "holds no records"),
    ],
)
def test_inconsistent_input_writes_nothing(
    conn: Connection, records: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sync_catalog(conn, records)
    assert read_generation(conn, "zones") == 0


def test_records_of_another_family_are_refused(conn: Connection, marine: list[ZoneRecord]) -> None:
    with pytest.raises(ValueError, match="marine zone was given as part of the public family"):
        sync_catalog(conn, {"public": marine})
    assert count_zones(conn) == 0


def test_failure_part_way_leaves_the_previous_catalog(
    committed: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require_shared_data()
    apply_files(committed, {"public": LAND, "marine": MARINE})
    before = snapshot(committed)
    catalog = ZoneCatalog(committed)
    assert catalog.name_for("ALZ019") == "Calhoun"

    inserted: list[int] = []
    real_insert = service._insert_batch

    def dying_insert(conn: Connection, table: Table, batch: list[dict[str, Any]]) -> None:
        real_insert(conn, table, batch)
        inserted.append(len(batch))
        if sum(inserted) >= 2000:  # the process dies after 2,000 new rows are written
            raise RuntimeError("killed part-way")

    monkeypatch.setattr(service, "_insert_batch", dying_insert)
    replacement = write_dbf(
        tmp_path / "z_01ja26.dbf",
        [("STATE", "C", 2, 0), ("ZONE", "C", 3, 0), ("NAME", "C", 20, 0)],
        [{"STATE": "TX", "ZONE": f"{n:03d}", "NAME": f"New {n}"} for n in range(1, 1000)]
        + [{"STATE": "OK", "ZONE": f"{n:03d}", "NAME": f"New {n}"} for n in range(1, 1000)]
        + [{"STATE": "KS", "ZONE": f"{n:03d}", "NAME": f"New {n}"} for n in range(1, 1000)],
    )
    with pytest.raises(RuntimeError, match="killed part-way"):
        apply_files(committed, {"public": replacement})
    assert sum(inserted) == 2000
    assert snapshot(committed) == before
    with committed.connect() as conn:
        assert read_sources(conn)["public"].file_name == "z_18mr25.dbf"
        assert (
            conn.execute(
                select(wx_zones.c.name).where(wx_zones.c.zone_code == "TXZ001")
            ).scalar_one()
            != "New 1"
        )
    catalog.clear()
    assert catalog.lookup("ALZ019") is not None and catalog.size == LAND_CODES + MARINE_RECORDS


@pytest.mark.parametrize("broken", ["foreign", "truncated"])
def test_a_bad_file_leaves_the_table_untouched(
    committed: Engine, tmp_path: Path, broken: str
) -> None:
    require_shared_data()
    apply_files(committed, {"public": LAND})
    before = snapshot(committed)
    if broken == "foreign":
        bad = write_dbf(tmp_path / "mz01ja26.dbf", [("WHAT", "C", 3, 0)], [{"WHAT": "x"}])
        expected = r"^Unrecognised zone DBF schema in mz01ja26\.dbf: columns found: WHAT;"
    else:
        bad = tmp_path / "mz01ja26.dbf"
        bad.write_bytes(MARINE.read_bytes()[:50_000])
        expected = r"^mz01ja26\.dbf is truncated"
    with pytest.raises(ValueError, match=expected):
        apply_files(committed, {"marine": bad, "public": LAND})
    assert snapshot(committed) == before


def test_a_file_of_the_wrong_family_is_refused(committed: Engine) -> None:
    require_shared_data()
    with pytest.raises(ValueError, match="z_18mr25.dbf holds public zones, not marine zones"):
        apply_files(committed, {"marine": LAND})
    assert snapshot(committed) == (0, 0, 0, 0)


def test_ensure_seeds_once_then_follows_changed_files(committed: Engine, tmp_path: Path) -> None:
    require_shared_data()
    settings = make_settings(tmp_path, committed.url.render_as_string(hide_password=False))
    assert ensure_catalog(committed, settings) is None, "no files: nothing to do"
    assets = settings.assets_dir
    assets.mkdir()
    copy_shared(LAND, assets / "z_18mr25.dbf")
    copy_shared(MARINE, assets / "mz20fe25.dbf")

    first = ensure_catalog(committed, settings)
    assert first is not None and first.counts == {"public": LAND_CODES, "marine": MARINE_RECORDS}
    assert ensure_catalog(committed, settings) is None, "same files: nothing to do"

    copy_shared(PARTIAL, assets / "cs16ap26.dbf")
    edited = bytearray(MARINE.read_bytes())
    first_name = 225 + 1 + 6 + 3 + 3  # header, deletion flag, ID, WFO, GL_WFO
    edited[first_name : first_name + 6] = b"KAUAI "  # same file name and size, new content
    (assets / "mz20fe25.dbf").write_bytes(bytes(edited))
    second = ensure_catalog(committed, settings)
    assert second is not None and set(second.counts) == {"marine", "partial"}
    with committed.connect() as conn:
        assert (
            conn.execute(
                select(wx_zones.c.name).where(wx_zones.c.zone_code == "PHZ113")
            ).scalar_one()
            == "KAUAI Channel"
        )
        actions = conn.execute(select(audit_logs.c.target)).scalars().all()
    assert actions == ["zone_catalog", "zone_catalog"], "each applying ensure is audited"

    with begin_write(committed) as conn:
        conn.execute(wx_zones.delete())  # an emptied catalog is seeded again in full
    third = ensure_catalog(committed, settings)
    assert third is not None and set(third.counts) == {"public", "marine", "partial"}


def test_ensure_refuses_a_configured_file_that_is_missing(engine: Engine, tmp_path: Path) -> None:
    url = engine.url.render_as_string(hide_password=False)
    settings = make_settings(tmp_path, url, wx_zone_dbf_path=tmp_path / "z_01ja26.dbf")
    with pytest.raises(ValueError, match=r"zone DBF file not found: .*z_01ja26\.dbf"):
        ensure_catalog(engine, settings)
    assert snapshot(engine) == (0, 0, 0, 0)
