"""The batch path's driver-level inserts store the values SQLAlchemy's inserts store.

``ingest.rows._RowInsert`` binds rows itself (each column's own bind processor, once per distinct
value) and inserts them through the driver. Read back through the driver, with no type
conversion on the way out, every column of every row it writes must equal what ingesting the
same messages one at a time (``ingest.ingest_alert``) writes, and what the batch path writes
with its SQLAlchemy fallback.
"""

from __future__ import annotations

from datetime import UTC, timedelta, timezone
from typing import Any
from unittest import mock

import pytest
from sqlalchemy import Connection, Engine

from alertstation.alerts.ingest import batch as bulk
from alertstation.alerts.ingest import ingest_alert, ingest_batch, rows
from alertstation.alerts.model import Alert, Reference, SignatureCheck
from alertstation.alerts.vtec import parse_vtec_strings
from tests.alerts.test_bulk import MATCHERS, NOW, SENDER, T0

TABLES = ("cap_alerts", "cap_alert_geocodes", "cap_alert_refs", "cap_alert_vtec")
CDT = timezone(timedelta(hours=-5))


def alerts() -> list[Alert]:
    """Messages that exercise every column kind: offsets, empty times, flags, refs, VTEC."""
    base = T0.astimezone(CDT)
    return [
        Alert(
            identifier="w-1", sender=SENDER, sent=base, event="Severe Thunderstorm Warning",
            event_code="SVR", effective=base, onset=None, expires=base + timedelta(hours=1),
            ends=(base + timedelta(hours=2)).astimezone(UTC), same_codes=("040109", "040021"),
            vtec=parse_vtec_strings("/O.NEW.KOUN.SV.W.0007.000000T0000Z-260514T2300Z/"),
            headline="It's a 'quoted' headline; with % and ? marks", raw="<alert/>",
        ),
        Alert(
            identifier="w-2", sender=SENDER, sent=base + timedelta(minutes=5), msg_type="Update",
            event_code="SVR", expires=base + timedelta(hours=1), same_codes=("040109",),
            references=(Reference(SENDER, "w-1", base),),
            vtec=parse_vtec_strings("/O.CON.KOUN.SV.W.0007.000000T0000Z-260514T2300Z/"),
            signature=SignatureCheck("failed", "no trust anchor"),
        ),
        Alert(
            identifier="w-3", sender="other@example.org", sent=base, status="Test",
            event_code="TOR", expires=base - timedelta(hours=1), same_codes=("006037",),
        ),
        Alert(
            identifier="w-4", sender=SENDER, sent=base + timedelta(minutes=9), msg_type="Cancel",
            event_code="SVR", expires=base + timedelta(hours=1), same_codes=("040109",),
            references=(Reference(SENDER, "w-1", base), Reference(SENDER, "w-2", base)),
            vtec=parse_vtec_strings("/O.CAN.KOUN.SV.W.0007.000000T0000Z-260514T2300Z/"),
        ),
    ]  # fmt: skip


def raw_rows(conn: Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables ingest writes, as the driver returns it; ids as identifiers."""
    names = dict(conn.exec_driver_sql("SELECT id, identifier FROM cap_alerts").all())
    found: dict[str, list[tuple[Any, ...]]] = {}
    for table in (*TABLES, "eas_forward_queue"):
        result = conn.exec_driver_sql(f"SELECT * FROM {table}")  # noqa: S608 (fixed names)
        columns = list(result.keys())
        rows = []
        for row in result:
            values = dict(zip(columns, row, strict=True))
            if table == "cap_alerts":
                values["id"] = names[values["id"]]
            else:
                values.pop("id", None)
                values["alert_id"] = names[values["alert_id"]]
            rows.append(tuple(sorted(values.items())))
        found[table] = sorted(rows, key=repr)
    return found


def stored(engine: Engine, *, batch: bool, explicit: bool) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            if batch:
                ingest_batch(conn, alerts(), MATCHERS, explicit=explicit, now=NOW)
            else:
                for alert in alerts():
                    ingest_alert(conn, alert, MATCHERS, explicit=explicit, now=NOW)
            return raw_rows(conn)
        finally:
            transaction.rollback()


@pytest.mark.parametrize("explicit", [False, True])
def test_driver_inserts_store_what_sqlalchemy_inserts_store(engine: Engine, explicit: bool) -> None:
    one_by_one = stored(engine, batch=False, explicit=explicit)
    assert len(one_by_one["cap_alerts"]) == (4 if explicit else 3)
    assert one_by_one["cap_alert_refs"] and one_by_one["eas_forward_queue"]
    assert stored(engine, batch=True, explicit=explicit) == one_by_one
    with mock.patch.object(bulk, "native_writes", return_value=False):
        assert stored(engine, batch=True, explicit=explicit) == one_by_one


def test_a_batch_larger_than_one_insert_gets_every_id_right(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows, "_ROWS_PER_INSERT", 3)  # four new alerts: two statements
    assert stored(engine, batch=True, explicit=True) == stored(engine, batch=False, explicit=True)
