"""Generation counters and the cache that follows them."""

from __future__ import annotations

from sqlalchemy import Connection, Engine

from alertstation.db import GenerationCache, bump_generation, read_generation
from alertstation.db.engine import begin_write
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
