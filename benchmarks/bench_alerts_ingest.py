"""Time CAP ingest (messages per second) against bare inserts of the same rows, on both backends.

The input is real-shaped NWS traffic (``benchmarks/nws_products.py``): multi-segment products
(several CAP messages per product with the same ``sent``, identifiers ending ``.001.1``,
``.002.1``), CON, EXA, EXT, UPG, CAN and EXP segments of one VTEC event naming different
county or zone subsets, partial cancels, events running over hours, 16 offices and ten
phenomena, delivered out of order. Each update re-decides the per-code states of the event's
earlier messages (the re-match of what they still cover), so both groups time that too.

Two groups: ``alerts.ingest[<backend>]`` one message per call and per transaction on both sides
(a poller fetching linked documents one by one); ``alerts.ingest_batch[<backend>]`` the batch
path (``alerts.ingest.import_bodies``: ``alerts import``, a feed's entries, an upload) against bare
multi-row inserts of the same rows, both in one transaction for the whole batch.

``alerts.ingest[<backend>]``: the messages through ``import_messages(..., explicit=False)``, the
path the poller takes: hardened XML parse, geocode matching, the duplicate check, VTEC chain
and reference lookups, the per-code lifecycle of every message the new one touches, one write
transaction per message. The peer inserts the rows ingest ends up with (``cap_alerts``, its
geocodes with their per-code states, references, VTEC rows and forward-queue rows), read back
from a reference run beforehand, with bare SQLAlchemy Core inserts, also one transaction per
message: the floor any ingest on this schema pays (it never parses, decides or updates). Rate =
messages / median time.

SQLite runs in a file database; PostgreSQL runs when the throwaway cluster is up
(``ALERTSTATION_TEST_PG_URL``, as for the tests). The stored rows of ours (one message at a
time and in one batch, which must agree whatever the arrival order) and the peer are compared
before timing; with ``--benchmark-disable`` (as ``make test`` runs) the batch is small.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, delete, insert, select

from alertstation.alerts.ingest import import_bodies, import_messages
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from benchmarks.nws_products import NOW, feed_states, make_products, station_area
from tests.support import BACKENDS, create_database, drop_database

PEER = "bare SQLAlchemy inserts"
SEED = 20261123
FULL_BATCH = 1000
SMALL_BATCH = 60
COUNTIES = station_area()
#: The child tables a stored alert owns, in insert order.
CHILDREN = (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue)

#: One stored message as the peer inserts it: the alert row (its id included) and the rows of
#: each child table.
Stored = tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]


def _label(benchmark: Any, group: str, role: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER


def make_messages(count: int) -> list[bytes]:
    """Return ``count`` seeded CAP messages of multi-segment NWS products, in arrival order."""
    return make_products(count, SEED)


def peer_rows(engine: Engine, messages: list[bytes]) -> list[Stored]:
    """Read back what a run of ours stored (untimed), one entry per stored message.

    The entries come in arrival order; each holds the alert row with its id (so that a code's
    ``ended_by`` names the same message whichever order the peer inserts in) and its child rows.
    """
    with engine.connect() as conn:
        alerts = {
            row["identifier"]: dict(row) for row in conn.execute(select(cap_alerts)).mappings()
        }
        children: dict[str, dict[int, list[dict[str, Any]]]] = {}
        for table in CHILDREN:
            by_alert: dict[int, list[dict[str, Any]]] = {}
            for row in conn.execute(select(table)).mappings():
                values = {k: v for k, v in row.items() if k != "id"}
                by_alert.setdefault(row["alert_id"], []).append(values)
            children[table.name] = by_alert
    rows = []
    for message in messages:
        identifier = message.split(b"<identifier>", 1)[1].split(b"<", 1)[0].decode()
        values = alerts.pop(identifier, None)
        if values is not None:
            owned = {name: by_alert.get(values["id"], []) for name, by_alert in children.items()}
            rows.append((values, owned))
    return rows


def ours(engine: Engine, messages: list[bytes]) -> int:
    """Ingest every message the way the poller does; return how many were stored."""
    stored = 0
    for message in messages:
        for result in import_messages(engine, message, "bench", explicit=False, now=NOW):
            stored += getattr(result, "outcome", "") == "stored"
    return stored


def peer(engine: Engine, rows: list[Stored]) -> int:
    """Insert the prepared rows, one transaction per message; return how many."""
    for values, owned in rows:
        with begin_write(engine) as conn:
            conn.execute(insert(cap_alerts).values(**values))
            for table in CHILDREN:
                if owned[table.name]:
                    conn.execute(insert(table), owned[table.name])
    return len(rows)


def ours_batch(engine: Engine, messages: list[bytes]) -> int:
    """Ingest every message through the batch path (one chunk); return how many were stored."""
    results = import_bodies(engine, [(m, "bench") for m in messages], explicit=False, now=NOW)
    return sum(getattr(result, "outcome", "") == "stored" for result in results)


def peer_batch(engine: Engine, rows: list[Stored]) -> int:
    """Insert the prepared rows in one transaction, a multi-row insert a table; return how many."""
    with begin_write(engine) as conn:
        conn.execute(insert(cap_alerts), [values for values, _owned in rows])
        for table in CHILDREN:
            children = [row for _values, owned in rows for row in owned[table.name]]
            if children:
                conn.execute(insert(table), children)
    return len(rows)


def empty_store(engine: Engine) -> None:
    """Delete every stored alert (and its rows) so each round ingests from scratch."""
    with begin_write(engine) as conn:
        for table in (*reversed(CHILDREN), cap_alerts):
            conn.execute(delete(table))


def stored_rows(engine: Engine) -> list[tuple[Any, ...]]:
    """Return what the store holds, ids replaced by identifiers, in a stable order."""
    a, g, r, v, q = (t.c for t in (cap_alerts, *CHILDREN))
    with engine.connect() as conn:
        names = dict(conn.execute(select(a.id, a.identifier)).all())
        alerts = conn.execute(
            select(
                a.identifier, a.sent, a.msg_type, a.event_code, a.expires, a.in_area,
                a.stored_area, a.match_code, a.state, a.cancelled_at,
            ).order_by(a.identifier)
        ).all()  # fmt: skip
        codes = conn.execute(
            select(g.alert_id, g.code_id, g.position, g.state, g.ended_at, g.ended_by)
        ).all()
        refs = conn.execute(select(r.alert_id, r.ref_identifier, r.ref_sent)).all()
        vtec = conn.execute(select(v.alert_id, v.position, v.action, v.etn, v.chain_terminal)).all()
        queue = conn.execute(select(q.alert_id, q.event_code, q.state, q.reason)).all()
    named = [sorted((names[row[0]], *row[1:]) for row in rows) for rows in (refs, vtec, queue)]
    codes_named = sorted((names[row[0]], *row[1:5], names.get(row[5], row[5])) for row in codes)
    return [tuple(row) for row in alerts] + [codes_named] + named


@pytest.fixture(scope="module", params=BACKENDS)
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """Return a migrated database on one backend, with the test counties configured."""
    url = create_database(request.param, tmp_path_factory.mktemp("ingest"))
    engine = make_engine(url)
    assert engine.dialect.name == request.param  # the group's name says which backend ran
    upgrade_to_head(engine)
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=COUNTIES, storage_zone_codes=feed_states())
    yield engine
    engine.dispose()
    drop_database(url)


@pytest.fixture(scope="module")
def workload(request: pytest.FixtureRequest, database: Engine) -> dict[str, Any]:
    """Return the messages and the peer's rows, after checking every side stores the same rows.

    One message at a time and all in one batch must end in the same states (the lifecycle never
    depends on arrival order or batching); the peer's inserts must reproduce them.
    """
    disabled = bool(request.config.getoption("benchmark_disable", default=False))
    messages = make_messages(SMALL_BATCH if disabled else FULL_BATCH)
    empty_store(database)
    stored = ours(database, messages)
    expected = stored_rows(database)
    rows = peer_rows(database, messages)
    assert stored == len(rows) == len(messages)  # the storage area covers the whole feed
    assert 0 < sum(row[5] for row in expected[:stored]) < stored  # some in the station's area
    assert {row[8] for row in expected[:stored]} >= {"active", "cancelled", "superseded"}
    empty_store(database)
    assert peer(database, rows) == stored
    assert stored_rows(database) == expected
    empty_store(database)
    assert ours_batch(database, messages) == stored
    assert stored_rows(database) == expected
    empty_store(database)
    assert peer_batch(database, rows) == stored
    assert stored_rows(database) == expected
    empty_store(database)
    return {"messages": messages, "rows": rows, "stored": stored}


def _group(database: Engine) -> str:
    return f"alerts.ingest[{database.dialect.name}]"


def test_ingest_ours(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, _group(database), "ours")
    messages = workload["messages"]
    benchmark.extra_info["messages"] = len(messages)
    stored = benchmark.pedantic(
        ours, args=(database, messages), setup=lambda: empty_store(database), rounds=3
    )
    assert stored == workload["stored"]


def test_ingest_peer(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, _group(database), "peer")
    rows = workload["rows"]
    benchmark.extra_info["messages"] = len(rows)
    inserted = benchmark.pedantic(
        peer, args=(database, rows), setup=lambda: empty_store(database), rounds=3
    )
    assert inserted == len(rows)


def test_ingest_batch_ours(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, f"alerts.ingest_batch[{database.dialect.name}]", "ours")
    benchmark.extra_info["peer"] = "bare SQLAlchemy multi-row inserts, one transaction"
    messages = workload["messages"]
    benchmark.extra_info["messages"] = len(messages)
    stored = benchmark.pedantic(
        ours_batch, args=(database, messages), setup=lambda: empty_store(database), rounds=5
    )
    assert stored == workload["stored"]


def test_ingest_batch_peer(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, f"alerts.ingest_batch[{database.dialect.name}]", "peer")
    benchmark.extra_info["peer"] = "bare SQLAlchemy multi-row inserts, one transaction"
    rows = workload["rows"]
    benchmark.extra_info["messages"] = len(rows)
    inserted = benchmark.pedantic(
        peer_batch, args=(database, rows), setup=lambda: empty_store(database), rounds=5
    )
    assert inserted == len(rows)
