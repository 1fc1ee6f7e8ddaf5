"""Time CAP ingest (messages per second) against bare inserts of the same rows, on both backends.

Two groups: ``alerts.ingest[<backend>]`` one message per call and per transaction on both sides
(a poller fetching linked documents one by one); ``alerts.ingest_batch[<backend>]`` the batch
path (``alerts.ingest.import_bodies``: ``alerts import``, a feed's entries, an upload) against bare
multi-row inserts of the same rows, both in one transaction for the whole batch.

``alerts.ingest[<backend>]``: seeded CAP 1.2 messages (each with a P-VTEC string of its own
chain and three SAME codes in the configured area) through ``import_messages(...,
explicit=False)``, the path the poller takes: hardened XML parse, geocode matching, the
duplicate check, VTEC chain and reference lookups, state recompute, one write transaction per
message. The peer inserts the rows ingest ends up with (``cap_alerts`` plus geocode ids and
VTEC rows), prepared beforehand, with bare SQLAlchemy Core inserts, also one transaction per
message: the floor any ingest on this schema pays. Rate = messages / median time.

SQLite runs in a file database; PostgreSQL runs when the throwaway cluster is up
(``ALERTSTATION_TEST_PG_URL``, as for the tests). The stored rows of ours and the peer are
compared before timing; with ``--benchmark-disable`` (as ``make test`` runs) the batch is small.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, delete, insert, select

from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.ingest import import_bodies, import_messages
from alertstation.alerts.matching import encode_geocode_lists
from alertstation.alerts.model import Alert
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alert_geocodes, cap_alert_vtec, cap_alerts
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from tests.support import BACKENDS, create_database, drop_database

PEER = "bare SQLAlchemy inserts"
SEED = 20261123
FULL_BATCH = 1000
SMALL_BATCH = 20
COUNTIES = [f"0{state:02d}{county:03d}" for state in (40, 48) for county in range(1, 200, 2)]
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
CAP_NS = "urn:oasis:names:tc:emergency:cap:1.2"


def _label(benchmark: Any, group: str, role: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER


def make_messages(count: int) -> list[bytes]:
    """Return ``count`` seeded CAP messages, each the start of its own VTEC chain."""
    rng = random.Random(SEED)
    messages = []
    for number in range(count):
        sent = NOW - timedelta(minutes=rng.randrange(0, 120))
        ends = sent + timedelta(hours=2)
        codes = rng.sample(COUNTIES, 3)
        geocodes = "".join(
            f"<geocode><valueName>SAME</valueName><value>{code}</value></geocode>" for code in codes
        )
        vtec = f"/O.NEW.KOUN.SV.W.{number + 1:04d}.{sent:%y%m%dT%H%MZ}-{ends:%y%m%dT%H%MZ}/"
        messages.append(
            f"""<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="{CAP_NS}"><identifier>bench-{SEED}-{number}</identifier>
<sender>w-nws.webmaster@noaa.gov</sender><sent>{sent.isoformat()}</sent><status>Actual</status>
<msgType>Alert</msgType><scope>Public</scope><info><category>Met</category>
<event>Severe Thunderstorm Warning</event><urgency>Immediate</urgency><severity>Severe</severity>
<certainty>Observed</certainty><eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
<expires>{ends.isoformat()}</expires><headline>Severe Thunderstorm Warning {number}</headline>
<description>Hail and damaging wind.</description>
<parameter><valueName>VTEC</valueName><value>{vtec}</value></parameter>
<area><areaDesc>Counties</areaDesc>{geocodes}</area></info></alert>
""".encode()
        )
    return messages


def peer_rows(messages: list[bytes]) -> list[tuple[dict[str, Any], list[int], list[dict]]]:
    """Parse once (untimed) into the rows ingest stores: alert, geocode ids, VTEC rows."""
    rows = []
    for message in messages:
        [alert] = parse_any(message)
        assert isinstance(alert, Alert)
        values = {
            name: getattr(alert, name)
            for name in (
                "sender", "identifier", "sent", "source", "status", "msg_type", "event",
                "event_code", "severity", "urgency", "certainty", "headline", "area_desc",
                "effective", "onset", "expires", "ends", "raw",
            )
        }  # fmt: skip
        values.update(
            state="active", in_area=True, stored_area=True, explicit=False,
            received_at=NOW, updated_at=NOW,
        )  # fmt: skip
        flat, _ = encode_geocode_lists([sorted(alert.geocodes)])
        vtec = [
            {
                "position": position, "product_class": v.product_class, "action": v.action,
                "office": key[0], "phenomenon": key[1], "significance": key[2], "etn": key[3],
                "year": key[4], "begin": v.begin, "end": v.end,
            }
            for position, v in enumerate(alert.vtec)
            for key in [v.event_key(alert.sent)]
        ]  # fmt: skip
        rows.append((values, sorted({int(c) for c in flat}), vtec))
    return rows


def ours(engine: Engine, messages: list[bytes]) -> int:
    """Ingest every message the way the poller does; return how many were stored."""
    stored = 0
    for message in messages:
        for result in import_messages(engine, message, "bench", explicit=False, now=NOW):
            stored += getattr(result, "outcome", "") == "stored"
    return stored


def peer(engine: Engine, rows: list[tuple[dict[str, Any], list[int], list[dict]]]) -> int:
    """Insert the prepared rows, one transaction per message; return how many."""
    for values, code_ids, vtec in rows:
        with begin_write(engine) as conn:
            alert_id = conn.execute(insert(cap_alerts).values(**values)).inserted_primary_key[0]
            conn.execute(
                insert(cap_alert_geocodes), [{"alert_id": alert_id, "code_id": c} for c in code_ids]
            )
            if vtec:
                conn.execute(insert(cap_alert_vtec), [{**v, "alert_id": alert_id} for v in vtec])
    return len(rows)


def ours_batch(engine: Engine, messages: list[bytes]) -> int:
    """Ingest every message through the batch path (one chunk); return how many were stored."""
    results = import_bodies(engine, [(m, "bench") for m in messages], explicit=False, now=NOW)
    return sum(getattr(result, "outcome", "") == "stored" for result in results)


def peer_batch(engine: Engine, rows: list[tuple[dict[str, Any], list[int], list[dict]]]) -> int:
    """Insert the prepared rows in one transaction, three multi-row inserts; return how many."""
    with begin_write(engine) as conn:
        ids = conn.execute(
            insert(cap_alerts).returning(cap_alerts.c.id, sort_by_parameter_order=True),
            [values for values, _codes, _vtec in rows],
        ).scalars()
        codes, vtec = [], []
        for alert_id, (_values, code_ids, vtec_rows) in zip(ids, rows, strict=True):
            codes += [{"alert_id": alert_id, "code_id": c} for c in code_ids]
            vtec += [{**v, "alert_id": alert_id} for v in vtec_rows]
        conn.execute(insert(cap_alert_geocodes), codes)
        conn.execute(insert(cap_alert_vtec), vtec)
    return len(rows)


def empty_store(engine: Engine) -> None:
    """Delete every stored alert (and its rows) so each round ingests from scratch."""
    from alertstation.alerts.tables import eas_forward_queue

    with begin_write(engine) as conn:
        for table in (eas_forward_queue, cap_alert_geocodes, cap_alert_vtec, cap_alerts):
            conn.execute(delete(table))


def stored_rows(engine: Engine) -> list[tuple[Any, ...]]:
    a = cap_alerts.c
    with engine.connect() as conn:
        alerts = conn.execute(
            select(a.identifier, a.sent, a.event_code, a.expires, a.in_area, a.state).order_by(
                a.identifier
            )
        ).all()
        codes = conn.execute(select(cap_alert_geocodes.c.code_id).order_by("code_id")).all()
        vtec = conn.execute(select(cap_alert_vtec.c.etn).order_by("etn")).all()
    return [tuple(row) for row in alerts] + [tuple(codes)] + [tuple(vtec)]


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
        set_alert_settings(conn, zone_codes=COUNTIES)
    yield engine
    engine.dispose()
    drop_database(url)


@pytest.fixture(scope="module")
def workload(request: pytest.FixtureRequest, database: Engine) -> dict[str, Any]:
    """Return the messages and the peer's rows, after checking both store the same rows."""
    disabled = bool(request.config.getoption("benchmark_disable", default=False))
    messages = make_messages(SMALL_BATCH if disabled else FULL_BATCH)
    rows = peer_rows(messages)
    empty_store(database)
    assert ours(database, messages) == len(messages)
    expected = stored_rows(database)
    empty_store(database)
    assert peer(database, rows) == len(messages)
    assert stored_rows(database) == expected
    empty_store(database)
    assert ours_batch(database, messages) == len(messages)
    assert stored_rows(database) == expected
    empty_store(database)
    assert peer_batch(database, rows) == len(messages)
    assert stored_rows(database) == expected
    empty_store(database)
    return {"messages": messages, "rows": rows}


def _group(database: Engine) -> str:
    return f"alerts.ingest[{database.dialect.name}]"


def test_ingest_ours(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, _group(database), "ours")
    messages = workload["messages"]
    benchmark.extra_info["messages"] = len(messages)
    stored = benchmark.pedantic(
        ours, args=(database, messages), setup=lambda: empty_store(database), rounds=3
    )
    assert stored == len(messages)


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
    assert stored == len(messages)


def test_ingest_batch_peer(benchmark: Any, database: Engine, workload: dict[str, Any]) -> None:
    _label(benchmark, f"alerts.ingest_batch[{database.dialect.name}]", "peer")
    benchmark.extra_info["peer"] = "bare SQLAlchemy multi-row inserts, one transaction"
    rows = workload["rows"]
    benchmark.extra_info["messages"] = len(rows)
    inserted = benchmark.pedantic(
        peer_batch, args=(database, rows), setup=lambda: empty_store(database), rounds=5
    )
    assert inserted == len(rows)
