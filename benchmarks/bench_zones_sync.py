"""Time a full zone sync against reading the files alone, and catalog lookups against a dict.

``zones.sync``: our loader plus the one-transaction sync of the land and marine files into a
migrated SQLite database, against the stock dbfread reading the same two files (the floor any
sync built on it has to pay). ``zones.lookup``: 100,000 seeded random codes through
:class:`ZoneCatalog` against a plain dict of code → name. Ours takes one ``view()`` per run (the
generation checked once per batch, as a request or an ingest batch does), then looks every code
up in it. Outputs are compared before timing; CI
runs this file with ``--benchmark-disable`` so each comparison still executes once.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dbfread
import pytest
from sqlalchemy import Engine

from alertstation.db import make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.loader import load_dbf
from alertstation.zones.service import apply_files
from tests.support import SHARED_DATA

LAND = SHARED_DATA / "zones" / "z_18mr25.dbf"
MARINE = SHARED_DATA / "zones" / "mz20fe25.dbf"
SEED = 20250318
LOOKUPS = 100_000


def _label(benchmark: Any, group: str, role: str, peer: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = peer


@pytest.fixture(scope="module")
def files() -> dict[str, Path]:
    """Return the land and marine files, skipping when the shared data is absent."""
    if not LAND.exists() or not MARINE.exists():
        pytest.skip(f"shared zone files not found under {SHARED_DATA}")
    return {"public": LAND, "marine": MARINE}


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """Return a migrated SQLite database in a temporary directory."""
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('bench') / 'zones.db'}")
    upgrade_to_head(engine)
    yield engine
    engine.dispose()


def ours_sync(engine: Engine, files: dict[str, Path]) -> int:
    """Load and sync both files; return the records read."""
    report = apply_files(engine, files)
    return sum(report.records.values())


def peer_read(files: dict[str, Path]) -> int:
    """Read both files with stock dbfread; return the records read."""
    return sum(len(list(dbfread.DBF(str(path)))) for path in files.values())


@pytest.fixture(scope="module")
def synced(database: Engine, files: dict[str, Path]) -> Engine:
    """Sync once and check ours and the peer read the same number of records."""
    assert ours_sync(database, files) == peer_read(files) == 4114 + 565
    return database


@pytest.fixture(scope="module")
def codes(synced: Engine, files: dict[str, Path]) -> list[str]:
    """Return seeded random codes (one in ten unknown) and check both lookups agree on them."""
    known = sorted({r.zone_code for path in files.values() for r in load_dbf(path)})
    rng = random.Random(SEED)
    picked = [
        rng.choice(known) if rng.random() < 0.9 else f"XXZ{rng.randrange(1000):03d}"
        for _ in range(LOOKUPS)
    ]
    catalog = ZoneCatalog(synced)
    names = plain_names(synced)
    expected = [names.get(code) for code in picked]
    assert [catalog.name_for(code) for code in picked] == expected
    assert [catalog.view().name_for(code) for code in picked] == expected
    return picked


def plain_names(engine: Engine) -> dict[str, str]:
    """Build the peer: a dict code → name of the preferred zone, read once."""
    catalog = ZoneCatalog(engine)
    return {code: record.name for code, record in catalog.index().preferred.items()}


def test_sync_ours(benchmark: Any, synced: Engine, files: dict[str, Path]) -> None:
    _label(benchmark, "zones.sync", "ours", "dbfread read")
    assert benchmark(ours_sync, synced, files) == 4114 + 565


def test_sync_peer(benchmark: Any, synced: Engine, files: dict[str, Path]) -> None:
    _label(benchmark, "zones.sync", "peer", "dbfread read")
    assert benchmark(peer_read, files) == 4114 + 565


def test_lookup_ours(benchmark: Any, synced: Engine, codes: list[str]) -> None:
    _label(benchmark, "zones.lookup", "ours", "plain dict")
    catalog = ZoneCatalog(synced)
    catalog.view()  # built before timing, as the peer's dict is

    def run() -> int:
        name_for = catalog.view().name_for
        return sum(1 for code in codes if name_for(code) is not None)

    assert benchmark(run) > LOOKUPS * 0.8


def test_lookup_peer(benchmark: Any, synced: Engine, codes: list[str]) -> None:
    _label(benchmark, "zones.lookup", "peer", "plain dict")
    names = plain_names(synced)

    def run() -> int:
        get = names.get
        return sum(1 for code in codes if get(code) is not None)

    assert benchmark(run) > LOOKUPS * 0.8
