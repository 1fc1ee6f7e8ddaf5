"""gunicorn builds the app once in its arbiter; what must not cross a fork is made anew."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import text

from alertstation.db.engine import make_engine
from alertstation.server import (
    StationServer,
    freeze_before_fork,
    fresh_after_fork,
    server_options,
)


def test_with_one_web_worker_the_worker_builds_the_app(tmp_path: Path) -> None:
    server = StationServer(server_options("127.0.0.1:0", 1, 4, tmp_path))
    assert server.cfg.preload_app is False  # nothing to share: the arbiter stays small


def test_with_two_web_workers_the_arbiter_preloads_the_app(tmp_path: Path) -> None:
    server = StationServer(server_options("127.0.0.1:0", 2, 4, tmp_path))
    assert server.cfg.preload_app is True
    assert server.cfg.pre_fork is freeze_before_fork
    assert server.cfg.post_fork is fresh_after_fork
    assert server.built is None  # built by load(), in the arbiter, before any fork


def test_a_forked_worker_drops_the_arbiters_database_connections(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'station.db'}")
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        pool = engine.pool
        assert pool.checkedin() == 1  # the arbiter's connection, pooled
        worker = SimpleNamespace(
            app=SimpleNamespace(built=SimpleNamespace(station=SimpleNamespace(engine=engine)))
        )
        fresh_after_fork(None, worker)
        assert engine.pool is not pool and engine.pool.checkedin() == 0
        with engine.connect() as conn:  # the worker opens its own
            assert conn.execute(text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()
