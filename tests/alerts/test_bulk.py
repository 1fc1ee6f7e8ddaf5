"""The batch path stores exactly what ingesting the same messages one by one stores.

Random message sequences (duplicates, Updates and Cancels that name messages earlier or later in
the batch, VTEC chains with every action, alerts in and out of the area, some already expired)
are ingested twice on the same database, each time in a transaction that is rolled back: once
through ``ingest.ingest_alert`` (a batch of one) per message, once through
``ingest.ingest_batch``. Outcomes, states, every stored row and the forward queue must be the
same.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, func, select

from alertstation.alerts.ingest import import_bodies, ingest_alert, ingest_batch
from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.model import Alert, Reference
from alertstation.alerts.service import ImportProblem, set_alert_settings
from alertstation.alerts.store import IngestResult, Matchers
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.alerts.vtec import parse_vtec_strings
from alertstation.db import read_generation
from alertstation.db.engine import begin_write
from tests.support import clear_tables

SENDER = "w-nws.webmaster@noaa.gov"
T0 = datetime(2026, 5, 14, 22, 0, tzinfo=UTC)
NOW = T0 + timedelta(minutes=30)
MATCHERS = Matchers(
    area=GeocodeMatcher(["040109"]),
    storage=GeocodeMatcher(["040000"]),
    forward_events=frozenset({"SVR", "TOR", "FFW"}),
)
ACTIONS = ("NEW", "CON", "EXT", "EXA", "EXB", "CAN", "EXP", "UPG", "COR", "ROU")

message = st.fixed_dictionaries(
    {
        "identifier": st.sampled_from([f"m{i}" for i in range(8)]),
        "minutes": st.integers(0, 30),
        "msg_type": st.sampled_from(["Alert", "Alert", "Update", "Cancel"]),
        "refs": st.lists(st.sampled_from([f"m{i}" for i in range(8)]), max_size=2),
        "vtec": st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(1, 3)), max_size=2),
        "codes": st.sampled_from([("040109",), ("040021",), ("006037",), ("040109", "006037")]),
        "event_code": st.sampled_from(["SVR", "TOR", "TOA"]),
        "expires_in": st.integers(5, 90),
        "status": st.sampled_from(["Actual", "Actual", "Test"]),
    }
)


def build(spec: dict[str, Any]) -> Alert:
    sent = T0 + timedelta(minutes=spec["minutes"])
    vtec = [
        f"/O.{action}.KOUN.SV.W.{etn:04d}.260514T2200Z-260514T2300Z/"
        for action, etn in spec["vtec"]
    ]
    return Alert(
        identifier=spec["identifier"],
        sender=SENDER,
        sent=sent,
        status=spec["status"],
        msg_type=spec["msg_type"],
        references=tuple(Reference(SENDER, ref, T0) for ref in spec["refs"]),
        event="Severe Weather",
        event_code=spec["event_code"],
        expires=sent + timedelta(minutes=spec["expires_in"]),
        same_codes=spec["codes"],
        vtec=parse_vtec_strings(vtec),
    )


def snapshot(conn: Connection) -> dict[str, Any]:
    """Every row ingest writes, with alert ids replaced by identifiers (ids are in id order)."""
    a = cap_alerts.c
    names = dict(conn.execute(select(a.id, a.identifier)).all())
    alerts = conn.execute(
        select(
            a.identifier, a.state, a.cancelled_at, a.in_area, a.stored_area, a.explicit,
            a.updated_at, a.expires,
        ).order_by(a.id)
    ).all()  # fmt: skip
    v, r, g, q = cap_alert_vtec.c, cap_alert_refs.c, cap_alert_geocodes.c, eas_forward_queue.c
    vtec = sorted(
        (names[row.alert_id], row.position, row.action, row.etn, row.chain_terminal)
        for row in conn.execute(select(v.alert_id, v.position, v.action, v.etn, v.chain_terminal))
    )
    refs = sorted(
        (names[row.alert_id], row.ref_identifier)
        for row in conn.execute(select(r.alert_id, r.ref_identifier))
    )
    codes = sorted(
        (names[row.alert_id], row.code_id) for row in conn.execute(select(g.alert_id, g.code_id))
    )
    queue = [
        (names[row.alert_id], row.event_code, row.state, row.reason)
        for row in conn.execute(select(q.alert_id, q.event_code, q.state, q.reason).order_by(q.id))
    ]
    return {
        "alerts": [tuple(row) for row in alerts],
        "vtec": vtec,
        "refs": refs,
        "codes": codes,
        "queue": queue,
    }


def described(conn: Connection, results: list[IngestResult]) -> list[tuple[Any, ...]]:
    names = dict(conn.execute(select(cap_alerts.c.id, cap_alerts.c.identifier)).all())
    return [
        (r.identifier, r.outcome, r.state, r.queued, r.in_area, names.get(r.alert_id))
        for r in results
    ]


def run(
    engine: Engine, before: list[Alert], batch: list[Alert], explicit: bool, *, bulk: bool
) -> tuple[list[tuple[Any, ...]], dict[str, Any], int]:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            for alert in before:
                ingest_alert(conn, alert, MATCHERS, now=T0 + timedelta(minutes=alert.sent.minute))
            generation = read_generation(conn, "alerts")
            if bulk:
                results = ingest_batch(conn, batch, MATCHERS, explicit=explicit, now=NOW)
            else:
                results = [
                    ingest_alert(conn, alert, MATCHERS, explicit=explicit, now=NOW)
                    for alert in batch
                ]
            moved = read_generation(conn, "alerts") - generation
            return described(conn, results), snapshot(conn), moved
        finally:
            transaction.rollback()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(message, max_size=4),
    batch=st.lists(message, min_size=1, max_size=10),
    explicit=st.booleans(),
)
def test_a_batch_stores_what_one_message_at_a_time_stores(
    engine: Engine, before: list[dict], batch: list[dict], explicit: bool
) -> None:
    stored_before = [build(spec) for spec in before]
    messages = [build(spec) for spec in batch]
    one_by_one = run(engine, stored_before, messages, explicit, bulk=False)
    batched = run(engine, stored_before, messages, explicit, bulk=True)
    assert batched[0] == one_by_one[0]
    assert batched[1] == one_by_one[1]
    # The generation moves once per batch that stored something, not once per message.
    assert batched[2] == (1 if one_by_one[2] else 0)


def test_an_update_and_a_cancel_before_their_alert_in_one_batch(conn: Connection) -> None:
    """Arrival order inside a batch: the Cancel and the Update name an alert that comes later."""
    cancel = build_simple("c", 10, msg_type="Cancel", refs=["a"])
    update = build_simple("u", 5, msg_type="Update", refs=["b"])
    a, b = build_simple("a", 0), build_simple("b", 0)
    results = ingest_batch(conn, [cancel, update, a, b, a], MATCHERS, now=NOW)
    assert [(r.identifier, r.outcome, r.state) for r in results] == [
        ("c", "stored", "cancelled"),
        ("u", "stored", "active"),
        ("a", "stored", "cancelled"),
        ("b", "stored", "superseded"),
        ("a", "duplicate", "cancelled"),
    ]
    assert results[4].alert_id == results[2].alert_id
    # A Cancel, an Update without VTEC, a cancelled or a superseded alert: none goes on air.
    assert not any(r.queued for r in results)


def build_simple(identifier: str, minutes: int, **kwargs: Any) -> Alert:
    spec = {
        "identifier": identifier,
        "minutes": minutes,
        "msg_type": "Alert",
        "refs": [],
        "vtec": [],
        "codes": ("040109",),
        "event_code": "SVR",
        "expires_in": 60,
        "status": "Actual",
    }
    spec.update(kwargs)
    return build(spec)


def test_an_identifier_too_long_writes_nothing(conn: Connection) -> None:
    with pytest.raises(ValueError, match="over the limit of 255"):
        ingest_batch(conn, [build_simple("a", 0), build_simple("x" * 256, 0)], MATCHERS, now=NOW)
    assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar_one() == 0


CAP = """<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>{identifier}</identifier>
<sender>{sender}</sender><sent>2026-05-14T22:00:00-00:00</sent><status>Actual</status>
<msgType>Alert</msgType><scope>Public</scope><info><category>Met</category>
<event>Severe Thunderstorm Warning</event><urgency>Immediate</urgency><severity>Severe</severity>
<certainty>Observed</certainty><eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
<expires>2026-05-14T23:00:00-00:00</expires>
<area><areaDesc>County</areaDesc><geocode><valueName>SAME</valueName><value>040109</value>
</geocode></area></info></alert>"""


def test_import_in_chunks_keeps_order_and_reports_problems(engine: Engine) -> None:
    clear_tables(engine)
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    bodies = [(CAP.format(identifier=f"id-{n}", sender=SENDER).encode(), f"f{n}") for n in range(5)]
    bodies.insert(2, (b"<not-cap/>", "bad"))
    bodies.insert(4, (CAP.format(identifier="y" * 300, sender=SENDER).encode(), "long"))
    bodies.append(bodies[0])
    results = import_bodies(engine, bodies, explicit=False, now=NOW, chunk=2)
    summary = [
        r.source if isinstance(r, ImportProblem) else (r.identifier, r.outcome) for r in results
    ]
    assert summary == [
        ("id-0", "stored"),
        ("id-1", "stored"),
        "bad",
        ("id-2", "stored"),
        "long (" + "y" * 80 + ")",
        ("id-3", "stored"),
        ("id-4", "stored"),
        ("id-0", "duplicate"),
    ]
    with engine.connect() as conn:
        stored = conn.execute(select(cap_alerts.c.identifier).order_by(cap_alerts.c.id)).scalars()
        assert list(stored) == [f"id-{n}" for n in range(5)]
    clear_tables(engine)
