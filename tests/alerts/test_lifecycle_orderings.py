"""NWS-like multi-segment products through the database path, on both backends.

A representative subset of orderings of each chain (the pure-rule test feeds every ordering),
each delivered one message per batch and all in one batch, must end in the per-code states of
the reference model. On PostgreSQL only the chains of up to 5 messages run. Then what the
remaining area drives: matching, the active-alerts query, the forward queue's re-check.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from sqlalchemy import Connection, select

from alertstation.alerts.airing_guard import alert_codes, refusal
from alertstation.alerts.codes import alert_codes_of
from alertstation.alerts.ingest import ingest_batch
from alertstation.alerts.ingest.reference import AlertView, decide_view
from alertstation.alerts.matching import GeocodeMatcher, decode_id
from alertstation.alerts.model import Alert
from alertstation.alerts.service import forward_queue, list_alerts, rematch_store
from alertstation.alerts.store import Matchers
from alertstation.alerts.tables import cap_alert_geocodes, cap_alert_vtec, cap_alerts
from tests.alerts.nws_chains import CHAINS, at, county_chain

NOW = at(200)
EVERYWHERE = Matchers(
    area=GeocodeMatcher(["039001", "018000", "073355"]),
    storage=GeocodeMatcher(["000000"]),
    forward_events=frozenset({"TOA", "WSW", "WSA"}),
)


def db_view(conn: Connection) -> dict[str, AlertView]:
    a, g = cap_alerts.c, cap_alert_geocodes.c
    names = dict(conn.execute(select(a.id, a.identifier)).all())
    view: dict[str, AlertView] = {}
    for row in conn.execute(select(a.id, a.identifier, a.state, a.cancelled_at)):
        view[row.identifier] = (row.state, row.cancelled_at, {})
    rows = conn.execute(
        select(g.alert_id, g.code_id, g.state, g.ended_at, g.ended_by).order_by(
            g.alert_id, g.position
        )
    )
    for row in rows:
        ender = names.get(row.ended_by) if row.ended_by is not None else None
        view[names[row.alert_id]][2][decode_id(row.code_id)] = (row.state, row.ended_at, ender)
    return view


def delivered(conn: Connection, order: Sequence[Alert], *, one_batch: bool) -> dict[str, AlertView]:
    savepoint = conn.begin_nested()
    try:
        if one_batch:
            ingest_batch(conn, list(order), EVERYWHERE, explicit=True, now=NOW)
        else:
            for alert in order:
                ingest_batch(conn, [alert], EVERYWHERE, explicit=True, now=NOW)
        return db_view(conn)
    finally:
        savepoint.rollback()


def some_orderings(chain: list[Alert]) -> list[list[Alert]]:
    rng = random.Random(len(chain))
    found = [list(chain), list(reversed(chain))]
    for _ in range(3):
        order = list(chain)
        rng.shuffle(order)
        found.append(order)
    return found


@pytest.mark.parametrize("chain_name", sorted(CHAINS))
def test_orderings_end_in_the_reference_states(conn: Connection, chain_name: str) -> None:
    chain = CHAINS[chain_name]()
    if conn.dialect.name == "postgresql" and len(chain) > 5:
        pytest.skip("on PostgreSQL only the chains of up to 5 messages run")
    whole = decide_view(chain, now=NOW)
    for order in some_orderings(chain):
        assert delivered(conn, order, one_batch=False) == whole, [a.identifier for a in order]
        assert delivered(conn, order, one_batch=True) == whole, [a.identifier for a in order]


def queue_of(conn: Connection) -> dict[str, tuple[int, str, str]]:
    names = dict(conn.execute(select(cap_alerts.c.id, cap_alerts.c.identifier)).all())
    return {names[q.alert_id]: (q.id, q.state, q.reason) for q in forward_queue(conn)}


def test_a_partial_cancel_moves_the_alert_out_of_the_area_and_the_forward_is_dropped(
    conn: Connection,
) -> None:
    new, _exa, _con, can, _con2 = county_chain()[:5]
    matchers = Matchers(
        area=GeocodeMatcher(["039001"]),
        storage=GeocodeMatcher(["039000"]),
        forward_events=frozenset({"TOA"}),
    )
    [stored] = ingest_batch(conn, [new], matchers, now=at(1))
    assert stored.queued and stored.in_area
    ingest_batch(conn, [can], matchers, now=at(121))
    row = conn.execute(select(cap_alerts).where(cap_alerts.c.id == stored.alert_id)).one()
    assert row.state == "active" and not row.in_area  # OHC001 ended; OHC003-007 remain
    assert [(r.identifier, r.in_area) for r in list_alerts(conn, now=at(121))] == [
        (new.identifier, False)
    ]
    entry = queue_of(conn)[new.identifier]
    assert entry[1] == "pending"
    reason = refusal(
        conn, stored.alert_id, at(1), max_age_minutes=600, forward_events=["TOA"], now=at(122)
    )
    assert reason == "none of the broadcast area's codes remain in force (4 ended)"
    # the re-match keeps to the remaining area
    assert rematch_store(conn, matchers.area, matchers.storage) == 0


def test_a_forward_airs_the_codes_still_in_force(conn: Connection) -> None:
    new, _exa, _con, can, _con2 = county_chain()[:5]
    matchers = Matchers(
        area=GeocodeMatcher(["039001", "039003"]),
        storage=GeocodeMatcher(["039000"]),
        forward_events=frozenset({"TOA"}),
    )
    [stored] = ingest_batch(conn, [new], matchers, now=at(1))
    assert alert_codes(conn, stored.alert_id)[:3] == ["039001", "039002", "039003"]
    ingest_batch(conn, [can], matchers, now=at(121))
    remaining = alert_codes(conn, stored.alert_id)
    assert remaining == [f"0390{n:02d}" for n in range(3, 8)] + [
        f"OHC0{n:02d}" for n in range(3, 8)
    ]
    reason = refusal(
        conn, stored.alert_id, at(1), max_age_minutes=600, forward_events=["TOA"], now=at(122)
    )
    assert reason == ""
    codes = alert_codes_of(conn, [stored.alert_id])[stored.alert_id]
    assert codes.codes[:2] == ["039001", "039002"]  # every code, in document order
    assert codes.ended["OHC001"].state == "cancelled"
    assert codes.ended["OHC001"].ended_at == at(120)


def test_a_cancel_without_info_stores_absent_fields_as_null(conn: Connection) -> None:
    from alertstation.alerts.model import Reference

    cancel = Alert(
        identifier="bare-cancel",
        sender="x@example.org",
        sent=at(5),
        msg_type="Cancel",
        references=(Reference("x@example.org", "original", at(0)),),
        raw="<alert/>",
    )
    ingest_batch(conn, [cancel], EVERYWHERE, explicit=True, now=at(6))
    row = conn.execute(select(cap_alerts).where(cap_alerts.c.identifier == "bare-cancel")).one()
    assert (row.event, row.event_code, row.headline, row.area_desc, row.severity) == (
        None, None, None, None, None,
    )  # fmt: skip
    assert row.state == "cancelled" and row.cancelled_at == at(5)


def test_codes_keep_document_order_same_then_ugc(conn: Connection) -> None:
    from alertstation.alerts.resources import codes_of

    alert = county_chain()[0]
    shuffled = Alert(
        identifier="order", sender=alert.sender, sent=alert.sent, event="Tornado Watch",
        event_code="TOA", expires=alert.expires, ugc_codes=("OHC007", "OHC001"),
        same_codes=("039007", "039001"), vtec=alert.vtec,
    )  # fmt: skip
    [stored] = ingest_batch(conn, [shuffled], EVERYWHERE, explicit=True, now=at(1))
    assert codes_of(conn, [stored.alert_id])[stored.alert_id] == [
        "039007", "039001", "OHC007", "OHC001",
    ]  # fmt: skip
    found = alert_codes_of(conn, [stored.alert_id])[stored.alert_id]
    assert found.remaining == found.codes


@pytest.mark.parametrize("one_batch", [False, True], ids=["one_per_batch", "one_batch"])
def test_a_partial_cancel_that_arrives_first_never_ends_the_event(
    conn: Connection, one_batch: bool
) -> None:
    new, _exa, _con, can, _con2 = county_chain()[:5]
    matchers = Matchers(
        area=GeocodeMatcher(["039003"]),
        storage=GeocodeMatcher(["039000"]),
        forward_events=frozenset({"TOA"}),
    )
    if one_batch:
        results = ingest_batch(conn, [can, new], matchers, now=at(121))
    else:
        results = [ingest_batch(conn, [m], matchers, now=at(121))[0] for m in (can, new)]
    stored = results[1]
    assert stored.queued
    # The CAN named OHC001-002 only: OHC003-007 of the NEW are live, so the event is not over.
    terminal = conn.execute(select(cap_alert_vtec.c.chain_terminal)).scalars().all()
    assert terminal == [False, False]
    reason = refusal(
        conn, stored.alert_id, at(121), max_age_minutes=600, forward_events=["TOA"], now=at(122)
    )
    assert reason == ""
