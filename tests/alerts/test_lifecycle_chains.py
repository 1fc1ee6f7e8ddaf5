"""Whole event chains driven through ingest on both backends: states, times, queue, query."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, func, select

from alertstation.alerts.ingest import ingest_alert
from alertstation.alerts.matching import GeocodeMatcher
from alertstation.alerts.model import Alert, Reference
from alertstation.alerts.service import forward_queue, list_alerts
from alertstation.alerts.store import IngestResult, Matchers, expire_due
from alertstation.alerts.tables import cap_alert_vtec, cap_alerts
from alertstation.alerts.vtec import parse_vtec_strings
from alertstation.db import read_generation

SENDER = "w-nws.webmaster@noaa.gov"
T0 = datetime(2026, 5, 14, 22, 0, tzinfo=UTC)
NOW = T0 + timedelta(minutes=1)
MATCHERS = Matchers(
    area=GeocodeMatcher(["040109"]),
    storage=GeocodeMatcher(["040000"]),
    forward_events=frozenset({"SVR", "TOR", "FFW"}),
)


def make_alert(
    identifier: str,
    minutes: int = 0,
    *,
    vtec: str = "",
    msg_type: str = "Alert",
    refs: Iterable[str] = (),
    event_code: str = "SVR",
    codes: tuple[str, ...] = ("040109",),
    expires_in: int = 60,
    status: str = "Actual",
) -> Alert:
    """Build an alert sent ``minutes`` after T0 that expires ``expires_in`` minutes later."""
    sent = T0 + timedelta(minutes=minutes)
    return Alert(
        identifier=identifier,
        sender=SENDER,
        sent=sent,
        status=status,
        msg_type=msg_type,
        references=tuple(Reference(SENDER, ref, T0) for ref in refs),
        event="Severe Thunderstorm Warning",
        event_code=event_code,
        expires=sent + timedelta(minutes=expires_in),
        same_codes=codes,
        vtec=parse_vtec_strings(vtec),
    )


def vtec(action: str, etn: int = 45, phen: str = "SV", sig: str = "W") -> str:
    return f"/O.{action}.KOUN.{phen}.{sig}.{etn:04d}.260514T2200Z-260514T2300Z/"


def ingest(conn: Connection, alert: Alert, minutes: int = 1, **kwargs: object) -> IngestResult:
    now = T0 + timedelta(minutes=minutes)
    return ingest_alert(conn, alert, MATCHERS, now=now, **kwargs)  # type: ignore[arg-type]


def states(conn: Connection) -> dict[str, str]:
    rows = conn.execute(select(cap_alerts.c.identifier, cap_alerts.c.state)).all()
    return dict(rows)  # type: ignore[arg-type]


def row(conn: Connection, identifier: str):  # type: ignore[no-untyped-def]
    return conn.execute(select(cap_alerts).where(cap_alerts.c.identifier == identifier)).one()


def active(conn: Connection, minutes: int = 1) -> list[str]:
    now = T0 + timedelta(minutes=minutes)
    return [r.identifier for r in list_alerts(conn, now=now)]


def queued(conn: Connection) -> dict[str, str]:
    ids = {
        r.id: r.identifier for r in conn.execute(select(cap_alerts.c.id, cap_alerts.c.identifier))
    }
    return {ids[q.alert_id]: q.state for q in forward_queue(conn)}


def test_new_con_ext_can(conn: Connection) -> None:
    assert ingest(conn, make_alert("new", 0, vtec=vtec("NEW"))).state == "active"
    assert active(conn) == ["new"]
    ingest(conn, make_alert("con", 10, vtec=vtec("CON"), msg_type="Update", refs=["new"]))
    assert states(conn) == {"new": "superseded", "con": "active"}
    assert queued(conn) == {"new": "pending"}  # the event lives on: the NEW still waits
    ingest(conn, make_alert("ext", 20, vtec=vtec("EXT"), msg_type="Update", refs=["con"]))
    assert states(conn) == {"new": "superseded", "con": "superseded", "ext": "active"}
    assert active(conn, 21) == ["ext"]
    result = ingest(
        conn, make_alert("can", 30, vtec=vtec("CAN"), msg_type="Cancel", refs=["new", "con", "ext"])
    )
    assert result.state == "cancelled" and not result.queued
    assert states(conn) == {
        "new": "superseded",
        "con": "superseded",
        "ext": "cancelled",
        "can": "cancelled",
    }
    ext = row(conn, "ext")
    assert ext.cancelled_at == T0 + timedelta(minutes=30)
    assert ext.expires == T0 + timedelta(minutes=80)  # original expires kept
    assert row(conn, "new").cancelled_at is None
    assert active(conn, 31) == []
    assert queued(conn) == {"new": "skipped"}  # only the NEW, skipped once the event ended
    terminal = conn.execute(select(cap_alert_vtec.c.chain_terminal)).scalars().all()
    assert terminal and all(terminal)


def test_new_then_exp(conn: Connection) -> None:
    ingest(conn, make_alert("new", 0, vtec=vtec("NEW")))
    result = ingest(conn, make_alert("exp", 59, vtec=vtec("EXP"), msg_type="Update", refs=["new"]))
    assert not result.queued
    assert states(conn) == {"new": "expired", "exp": "expired"}
    assert row(conn, "new").cancelled_at is None
    assert active(conn, 59) == []
    assert queued(conn) == {"new": "skipped"}  # expired before the EAS side took it


def test_new_then_upg_supersedes_old_event_and_forwards_new_one(conn: Connection) -> None:
    ingest(conn, make_alert("watch", 0, vtec=vtec("NEW", 100, sig="A")))
    upgrade = make_alert(
        "warning",
        15,
        vtec=vtec("UPG", 100, sig="A") + " " + vtec("NEW", 7, phen="TO"),
        msg_type="Update",
        refs=["watch"],
        event_code="TOR",
    )
    assert ingest(conn, upgrade).queued
    assert states(conn) == {"watch": "superseded", "warning": "active"}
    assert active(conn, 16) == ["warning"]
    assert queued(conn) == {"watch": "skipped", "warning": "pending"}


def test_upgrade_only_message_is_not_forwarded(conn: Connection) -> None:
    ingest(conn, make_alert("watch", 0, vtec=vtec("NEW", 100, sig="A")))
    only = make_alert("upg", 15, vtec=vtec("UPG", 100, sig="A"), msg_type="Update")
    result = ingest(conn, only)
    assert not result.queued
    assert states(conn) == {"watch": "superseded", "upg": "superseded"}


def test_update_and_cancel_by_references(conn: Connection) -> None:
    ingest(conn, make_alert("a", 0))
    ingest(conn, make_alert("b", 5, msg_type="Update", refs=["a"]))
    assert states(conn) == {"a": "superseded", "b": "active"}
    result = ingest(conn, make_alert("c", 10, msg_type="Cancel", refs=["b"]))
    assert result.state == "cancelled" and not result.queued
    assert states(conn) == {"a": "superseded", "b": "cancelled", "c": "cancelled"}
    b = row(conn, "b")
    assert b.cancelled_at == T0 + timedelta(minutes=10)
    assert b.expires == T0 + timedelta(minutes=65)
    assert active(conn, 11) == []
    assert queued(conn) == {"a": "skipped"}


def test_duplicates_are_one_row_and_change_nothing(conn: Connection) -> None:
    alert = make_alert("new", 0, vtec=vtec("NEW"))
    first = ingest(conn, alert)
    generation = read_generation(conn, "alerts")
    second = ingest(conn, alert)
    assert (first.outcome, second.outcome) == ("stored", "duplicate")
    assert second.alert_id == first.alert_id and second.state == "active"
    assert conn.execute(select(func.count()).select_from(cap_alerts)).scalar() == 1
    assert read_generation(conn, "alerts") == generation
    assert len(forward_queue(conn)) == 1


def test_can_before_its_new_and_con_after_the_can(conn: Connection) -> None:
    ingest(conn, make_alert("can", 30, vtec=vtec("CAN"), msg_type="Cancel", refs=["new"]))
    new = ingest(conn, make_alert("new", 0, vtec=vtec("NEW")), minutes=31)
    assert new.state == "cancelled" and not new.queued
    assert row(conn, "new").cancelled_at == T0 + timedelta(minutes=30)
    con = ingest(
        conn, make_alert("con", 10, vtec=vtec("CON"), msg_type="Update", refs=["new"]), minutes=32
    )
    assert con.state == "cancelled"
    assert states(conn) == {"can": "cancelled", "new": "superseded", "con": "cancelled"}
    late = ingest(
        conn, make_alert("late", 40, vtec=vtec("CON"), msg_type="Update", refs=["con"]), 41
    )
    assert late.state == "cancelled"  # a CON after the CAN never resurrects the chain
    assert active(conn, 42) == []
    assert queued(conn) == {}


def test_cancel_by_reference_before_the_original(conn: Connection) -> None:
    ingest(conn, make_alert("c", 10, msg_type="Cancel", refs=["a"]))
    result = ingest(conn, make_alert("a", 0), minutes=11)
    assert result.state == "cancelled" and not result.queued
    assert row(conn, "a").cancelled_at == T0 + timedelta(minutes=10)


def test_cancellation_after_expiry_leaves_the_alert_expired(conn: Connection) -> None:
    ingest(conn, make_alert("new", 0, vtec=vtec("NEW"), expires_in=20))
    assert expire_due(conn, now=T0 + timedelta(minutes=25)) == 1
    ingest(conn, make_alert("can", 30, vtec=vtec("CAN"), msg_type="Cancel", refs=["new"]), 31)
    assert row(conn, "new").state == "expired"
    assert row(conn, "new").cancelled_at is None


def test_expiry_by_time_and_the_sweep(conn: Connection) -> None:
    ingest(conn, make_alert("a", 0, expires_in=30))
    ingest(conn, make_alert("b", 0, expires_in=90, codes=("040109", "OKC109")))
    assert set(active(conn, 29)) == {"a", "b"}
    assert active(conn, 31) == ["b"]  # the query excludes it even before the sweep
    generation = read_generation(conn, "alerts")
    assert expire_due(conn, now=T0 + timedelta(minutes=29)) == 0
    assert read_generation(conn, "alerts") == generation
    assert expire_due(conn, now=T0 + timedelta(minutes=31)) == 1
    assert read_generation(conn, "alerts") == generation + 1
    assert states(conn) == {"a": "expired", "b": "active"}
    assert queued(conn) == {"a": "skipped", "b": "pending"}
    assert expire_due(conn, now=T0 + timedelta(minutes=32)) == 0


def test_an_alert_that_arrives_expired_is_stored_expired(conn: Connection) -> None:
    result = ingest(conn, make_alert("old", 0, expires_in=5), minutes=10)
    assert result.state == "expired" and not result.queued


@pytest.mark.parametrize(
    ("alert", "why"),
    [
        (make_alert("x", codes=("040017",)), "storage area only"),
        (make_alert("x", status="Test"), "a test message"),
        (make_alert("x", event_code="SVS"), "event not forwarded"),
        (make_alert("x", vtec=vtec("CON"), msg_type="Update"), "a continuation"),
        (make_alert("x", msg_type="Update"), "an Update without VTEC"),
    ],
)
def test_forward_guard(conn: Connection, alert: Alert, why: str) -> None:
    result = ingest(conn, alert)
    assert result.outcome == "stored", why
    assert not result.queued, why
    assert queued(conn) == {}


def test_area_flags_and_storing_rules(conn: Connection) -> None:
    assert ingest(conn, make_alert("far", codes=("006037",))).outcome == "ignored"
    explicit = ingest(conn, make_alert("far", codes=("006037",)), explicit=True)
    assert explicit.outcome == "stored" and not explicit.queued
    wide = ingest(conn, make_alert("wide", codes=("040017",)))
    assert wide.outcome == "stored" and not wide.in_area
    flags = {
        r.identifier: (r.in_area, r.stored_area, r.explicit)
        for r in conn.execute(select(cap_alerts))
    }
    assert flags == {"far": (False, False, True), "wide": (False, True, False)}
    # A follow-on of a stored alert is kept even when its own area matches nothing.
    follow = make_alert("upd", 5, msg_type="Update", refs=["far"], codes=("006037",))
    assert ingest(conn, follow).outcome == "stored"
    assert states(conn)["far"] == "superseded"


def test_every_change_bumps_the_generation(conn: Connection) -> None:
    before = read_generation(conn, "alerts")
    ingest(conn, make_alert("a", 0))
    assert read_generation(conn, "alerts") == before + 1
    ingest(conn, make_alert("far", codes=("006037",)))  # ignored: nothing written
    assert read_generation(conn, "alerts") == before + 1


def test_an_identifier_too_long_to_store_is_refused(conn: Connection) -> None:
    with pytest.raises(ValueError, match="over the limit of 255"):
        ingest(conn, make_alert("x" * 256))
    with pytest.raises(ValueError, match="over the limit of 255"):
        ingest(conn, make_alert("ok", msg_type="Update", refs=["y" * 300]))
    assert states(conn) == {}
