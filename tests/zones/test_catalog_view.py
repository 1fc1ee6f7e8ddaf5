"""Catalog views: one generation check for many lookups, still following syncs elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine

from alertstation.db import GenerationCache, begin_write, bump_generation, make_engine
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.service import apply_files
from tests.support import clear_tables
from tests.zones.zonefiles import LAND, MARINE, copy_shared, require_shared_data


class CountingClock:
    """A monotonic clock that counts how often it is read (each read is one freshness check)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


@pytest.fixture
def loaded(engine: Engine) -> Iterator[Engine]:
    require_shared_data()
    apply_files(engine, {"public": LAND, "marine": MARINE})
    yield engine
    clear_tables(engine)


@pytest.fixture
def other_engine(engine: Engine) -> Iterator[Engine]:
    other = make_engine(engine.url.render_as_string(hide_password=False))
    yield other
    other.dispose()


def test_a_view_answers_as_the_per_call_lookups(loaded: Engine) -> None:
    catalog = ZoneCatalog(loaded)
    view = catalog.view()
    for code in ("ALZ019", "PHZ113", "GMZ155", "XXZ999"):
        assert view.name_for(code) == catalog.name_for(code)
        assert view.record_for(code) == catalog.lookup(code)
        assert view.lookup(code, "marine") == catalog.lookup(code, "marine")
        assert view.contains(code) == catalog.contains(code)
    assert view.name_for("PHZ113") == "Kauai Channel"
    assert view.name_for("XXZ999") is None
    assert catalog.name_for(" phz113 ") == "Kauai Channel", "the per-call API still normalises"
    assert view.generation == catalog.generation


def test_many_lookups_in_a_view_check_the_generation_once(loaded: Engine) -> None:
    clock = CountingClock()
    catalog = ZoneCatalog(loaded, clock=clock)
    catalog.view()
    clock.reads = 0
    view = catalog.view()
    names = [view.name_for(code) for code in ["ALZ019", "PHZ113"] * 500]
    assert names.count("Kauai Channel") == 500
    assert clock.reads == 1
    clock.reads = 0
    [catalog.name_for(code) for code in ["ALZ019", "PHZ113"] * 500]
    assert clock.reads == 1000, "the per-call API checks on every lookup"


def test_a_new_view_sees_a_sync_elsewhere_within_about_a_second(
    loaded: Engine, other_engine: Engine, tmp_path: Path
) -> None:
    clock = CountingClock()
    there = ZoneCatalog(other_engine, clock=clock)
    before = there.view()
    assert before.name_for("PHZ113") == "Kauai Channel"

    renamed = bytearray(MARINE.read_bytes())
    first_name = 225 + 1 + 6 + 3 + 3  # header, deletion flag, ID, WFO, GL_WFO
    renamed[first_name : first_name + 13] = b"Kauai Strait "
    copy = copy_shared(MARINE, tmp_path / "mz21fe25.dbf")
    copy.write_bytes(bytes(renamed))
    apply_files(loaded, {"marine": copy})  # synced through another engine

    clock.now += 0.5
    assert there.view() is before, "re-checked at most once a second"
    clock.now += 0.6
    after = there.view()
    assert after.name_for("PHZ113") == "Kauai Strait"
    assert after.generation == before.generation + 1
    assert before.name_for("PHZ113") == "Kauai Channel", "a view taken earlier never changes"


def test_snapshot_gives_the_value_with_its_generation(engine: Engine) -> None:
    builds: list[int] = []

    def build(conn: Connection) -> int:
        builds.append(1)
        return len(builds)

    clock = CountingClock()
    cache = GenerationCache(engine, "zones", build, clock=clock)
    try:
        first = cache.snapshot()
        with begin_write(engine) as conn:
            generation = bump_generation(conn, "zones")
        assert cache.snapshot() == first
        clock.now += 1.5
        assert cache.snapshot() == (2, generation)
        assert cache.get() == 2 and cache.generation == generation
    finally:
        clear_tables(engine)
