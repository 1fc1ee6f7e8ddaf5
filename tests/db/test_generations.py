"""Generation counters and the cache that follows them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, create_engine

from alertstation.db import GenerationCache, bump_generation, read_generation
from alertstation.db.engine import begin_write
from alertstation.db.generations import FallbackCache
from tests.support import clear_tables


def test_bump_and_read(conn: Connection) -> None:
    assert read_generation(conn, "zones") == 0
    assert bump_generation(conn, "zones") == 1
    assert bump_generation(conn, "zones") == 2
    assert read_generation(conn, "zones") == 2
    assert read_generation(conn, "bans") == 0


def test_rolled_back_bump_is_not_seen(engine: Engine) -> None:
    try:
        with engine.connect() as conn:
            with conn.begin() as trans:
                bump_generation(conn, "zones")
                trans.rollback()
            assert read_generation(conn, "zones") == 0
    finally:
        clear_tables(engine)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_cache_rebuilds_only_when_generation_moves_and_at_most_once_a_second(
    engine: Engine,
) -> None:
    builds: list[int] = []

    def build(conn: Connection) -> int:
        builds.append(1)
        return len(builds)

    clock = FakeClock()
    cache = GenerationCache(engine, "zones", build, clock=clock)
    try:
        assert cache.get() == 1
        assert cache.get() == 1
        with begin_write(engine) as conn:  # another worker changes the table
            bump_generation(conn, "zones")
        assert cache.get() == 1, "re-checks at most once per interval"
        clock.now += 1.5
        assert cache.get() == 2
        assert cache.generation == 1
        clock.now += 1.5
        assert cache.get() == 2, "no rebuild while the generation is unchanged"
        cache.clear()
        assert cache.get() == 3
    finally:
        clear_tables(engine)


def test_fallback_cache_answers_the_last_good_value_while_the_database_is_down(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    builds: list[int] = []

    def build(conn: Connection) -> int:
        builds.append(1)
        return read_generation(conn, "zones") + 10

    down = create_engine(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")  # cannot be opened
    before = FallbackCache(down, "zones", build, -1, what="zone settings", monotonic=clock)
    assert before.get() == -1  # the default, never an exception
    assert "zone settings unavailable" in caplog.text

    try:
        cache = FallbackCache(engine, "zones", build, -1, what="zone settings", monotonic=clock)
        assert cache.get() == 10
        cache._cache._engine = down  # the database goes away
        with begin_write(engine) as conn:
            bump_generation(conn, "zones")
        clock.now += 2
        assert cache.get() == 10  # the last good value
        cache._cache._engine = engine  # and comes back
        assert cache.get() == 10  # not retried within the check interval
        clock.now += 2
        assert cache.get() == 11
    finally:
        clear_tables(engine)
