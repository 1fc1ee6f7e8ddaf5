"""Time resolving every open audio alert (50,000 rows) in one UPDATE against a per-row loop.

The peer is what a naive handler does: select the open alerts, then resolve them one UPDATE at a
time, in one transaction. Both leave the same rows resolved, checked before timing. Each round
starts from 50,000 open alerts (the setup reopens them, outside the timing). Under
``--benchmark-disable`` (``make test``) a smaller table keeps the run short.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, insert, select, update

from alertstation.audio import alerts
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audio.tables import audio_alerts
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from tests.support import BACKENDS, create_database, drop_database

FULL, SMALL = 50_000, 2_000
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
PEER = "select then one UPDATE per alert, one transaction"


def reopen(engine: Engine) -> None:
    """Make every alert open again."""
    with begin_write(engine) as conn:
        conn.execute(update(audio_alerts).values(resolved_at=None, resolved_by=None))


def ours(engine: Engine) -> int:
    with begin_write(engine) as conn:
        return alerts.resolve_all(conn, "bench", NOW)


def peer(engine: Engine) -> int:
    c = audio_alerts.c
    with begin_write(engine) as conn:
        ids = conn.execute(select(c.id).where(c.resolved_at.is_(None))).scalars().all()
        for alert_id in ids:
            conn.execute(
                update(audio_alerts)
                .where(c.id == alert_id)
                .values(resolved_by="bench", resolved_at=NOW)
            )
    return len(ids)


def open_count(engine: Engine) -> int:
    c = audio_alerts.c
    with engine.connect() as conn:
        query = select(func.count()).select_from(audio_alerts).where(c.resolved_at.is_(None))
        return int(conn.execute(query).scalar_one())


@pytest.fixture(scope="module", params=BACKENDS)
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, int]]:
    """Return a migrated database holding the open alerts, checked both ways."""
    disabled = bool(request.config.getoption("benchmark_disable", default=False))
    count = SMALL if disabled else FULL
    url = create_database(request.param, tmp_path_factory.mktemp("audio_alerts"))
    engine = make_engine(url)
    assert engine.dialect.name == request.param
    upgrade_to_head(engine)
    with begin_write(engine) as conn:
        sources = [
            create_source(conn, SourceConfig(name=f"s{i}", kind="stream", url="http://x/"), NOW)
            for i in range(10)
        ]
        kinds = alerts.KINDS
        rows = [
            {
                "source_id": sources[i % 10],
                "kind": kinds[i % 3],
                "started_at": NOW - timedelta(seconds=i),
                "ended_at": NOW,
            }
            for i in range(count)
        ]
        for start in range(0, count, 5000):
            conn.execute(insert(audio_alerts), rows[start : start + 5000])
    assert ours(engine) == count and open_count(engine) == 0
    reopen(engine)
    assert peer(engine) == count and open_count(engine) == 0
    reopen(engine)
    yield engine, count
    engine.dispose()
    drop_database(url)


def _label(benchmark: Any, engine: Engine, role: str, count: int) -> None:
    benchmark.group = f"audio.resolve_all[{engine.dialect.name}]"
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER
    benchmark.extra_info["open_alerts"] = count


def test_resolve_all_ours(benchmark: Any, database: tuple[Engine, int]) -> None:
    engine, count = database
    _label(benchmark, engine, "ours", count)
    resolved = benchmark.pedantic(ours, args=(engine,), setup=lambda: reopen(engine), rounds=3)
    assert resolved == count


def test_resolve_all_peer(benchmark: Any, database: tuple[Engine, int]) -> None:
    engine, count = database
    _label(benchmark, engine, "peer", count)
    resolved = benchmark.pedantic(peer, args=(engine,), setup=lambda: reopen(engine), rounds=1)
    assert resolved == count
