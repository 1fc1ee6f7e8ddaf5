"""The in-memory catalog: lookups, family preference, and following syncs of other processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from alertstation.db import begin_write, make_engine
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.loader import load_dbf
from alertstation.zones.service import apply_files, sync_catalog
from tests.support import clear_tables
from tests.zones.zonefiles import (
    LAND,
    LAND_CODES,
    LAND_RECORDS,
    MARINE,
    MARINE_RECORDS,
    copy_shared,
    public_row,
    require_shared_data,
    write_dbf,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def loaded(engine: Engine) -> Iterator[Engine]:
    """The session database holding the land and marine files; emptied afterwards."""
    require_shared_data()
    apply_files(engine, {"public": LAND, "marine": MARINE})
    yield engine
    clear_tables(engine)


@pytest.fixture
def other_engine(engine: Engine) -> Iterator[Engine]:
    """A second engine on the same database, standing in for another worker process."""
    other = make_engine(engine.url.render_as_string(hide_password=False))
    yield other
    other.dispose()


def test_every_land_and_marine_record_resolves(loaded: Engine) -> None:
    catalog = ZoneCatalog(loaded)
    assert catalog.size == 0, "nothing is held before the first lookup"
    for record in load_dbf(LAND):
        found = catalog.lookup(record.zone_code)
        assert found is not None and found.name == record.name
    for record in load_dbf(MARINE):
        assert catalog.name_for(record.zone_code) == record.name
    assert catalog.size == LAND_CODES + MARINE_RECORDS
    assert LAND_RECORDS + MARINE_RECORDS > catalog.size, "multi-part zones are one entry"


def test_lookup_normalises_case_and_filters_by_type(loaded: Engine) -> None:
    catalog = ZoneCatalog(loaded)
    assert catalog.lookup(" alz019 ") == catalog.lookup("ALZ019", "public")
    assert catalog.lookup("ALZ019", "marine") is None
    assert catalog.lookup("PHZ113", "marine") is not None
    assert catalog.lookup("XXZ999") is None and catalog.name_for("XXZ999") is None
    assert catalog.contains("GMZ155") and not catalog.contains("GMZ999")


def test_public_zone_is_preferred_over_fire_weather(loaded: Engine, tmp_path: Path) -> None:
    fire = write_dbf(
        tmp_path / "fz_18mr25.dbf",
        [("STATE", "C", 2, 0), ("ZONE", "C", 3, 0), ("NAME", "C", 30, 0)],
        [public_row("AL", "019", "Calhoun fire area"), public_row("AL", "999", "Fire only")],
    )
    apply_files(loaded, {"fire": fire})
    catalog = ZoneCatalog(loaded)
    assert catalog.name_for("ALZ019") == "Calhoun"
    fire_zone = catalog.lookup("ALZ019", "fire")
    assert fire_zone is not None and fire_zone.name == "Calhoun fire area"
    assert catalog.name_for("ALZ999") == "Fire only", "a fire-only code still resolves"


def test_a_sync_elsewhere_is_seen_within_about_a_second(
    loaded: Engine, other_engine: Engine, tmp_path: Path
) -> None:
    clock = FakeClock()
    here = ZoneCatalog(loaded, clock=clock)
    there = ZoneCatalog(other_engine, clock=clock)
    assert here.name_for("PHZ113") == there.name_for("PHZ113") == "Kauai Channel"

    renamed = bytearray(MARINE.read_bytes())
    first_name = 225 + 1 + 6 + 3 + 3  # header, deletion flag, ID, WFO, GL_WFO
    renamed[first_name : first_name + 13] = b"Kauai Strait "
    copy = copy_shared(MARINE, tmp_path / "mz21fe25.dbf")
    copy.write_bytes(bytes(renamed))
    apply_files(loaded, {"marine": copy})  # synced through the first engine

    clock.now += 0.5
    assert there.name_for("PHZ113") == "Kauai Channel", "re-checked at most once a second"
    clock.now += 0.6
    assert there.name_for("PHZ113") == "Kauai Strait"
    assert here.name_for("PHZ113") == "Kauai Strait"
    assert here.generation == there.generation


def test_a_rolled_back_sync_is_never_seen(loaded: Engine, other_engine: Engine) -> None:
    clock = FakeClock()
    catalog = ZoneCatalog(other_engine, clock=clock)
    catalog.index()
    generation = catalog.generation
    marine = load_dbf(MARINE)
    with pytest.raises(RuntimeError):
        with begin_write(loaded) as conn:
            sync_catalog(conn, {"marine": marine[:1]})
            raise RuntimeError("rolled back")
    clock.now += 5
    assert catalog.size == LAND_CODES + MARINE_RECORDS
    assert catalog.lookup("GMZ155") is not None and catalog.generation == generation


def test_clear_drops_the_copy_at_once(loaded: Engine) -> None:
    clock = FakeClock()
    catalog = ZoneCatalog(loaded, clock=clock)
    assert catalog.lookup("ALZ019") is not None
    with begin_write(loaded) as conn:
        sync_catalog(conn, {"marine": load_dbf(MARINE)[:3]})
    assert catalog.size == LAND_CODES + MARINE_RECORDS, "still the old copy within the second"
    catalog.clear()
    assert catalog.size == 0
    assert catalog.lookup("ALZ019") is not None
    assert catalog.size == LAND_CODES + 3
