"""The per-code state migration replays the stored messages, keeps every row, and goes back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from sqlalchemy import insert, select, text

from alertstation.alerts.matching import encode_code
from alertstation.alerts.tables import (
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db import make_engine
from alertstation.db.migrate import alembic_config

BEFORE = "20261129_airing_truth"
REVISION = "20261129_alert_code_states"
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)  # still in force now
CAP = """<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">
  <identifier>{identifier}</identifier><sender>w-nws.webmaster@noaa.gov</sender>
  <sent>{sent}</sent><status>Actual</status><msgType>Alert</msgType><scope>Public</scope>
  <info><category>Met</category><event>Tornado Watch</event><urgency>Future</urgency>
    <severity>Extreme</severity><certainty>Possible</certainty>
    <area><areaDesc>Two counties</areaDesc>{codes}</area></info>
</alert>"""


def geocode(name: str, value: str) -> str:
    return f"<geocode><valueName>{name}</valueName><value>{value}</value></geocode>"


def add_alert(conn, identifier: str, minutes: int, action: str, codes: list[str]) -> int:  # type: ignore[no-untyped-def]
    sent = T0 + timedelta(minutes=minutes)
    xml = "".join(geocode("UGC" if c[2].isalpha() else "SAME", c) for c in codes)
    row = {
        "sender": "w-nws.webmaster@noaa.gov", "identifier": identifier, "sent": sent,
        "source": "cap-xml", "status": "Actual", "msg_type": "Alert", "event": "Tornado Watch",
        "event_code": "TOA", "severity": "Extreme", "urgency": "Future", "certainty": "Possible",
        "headline": "", "area_desc": "Two counties", "expires": T0 + timedelta(hours=8),
        "state": "active", "in_area": True, "stored_area": True,
        "raw": CAP.format(identifier=identifier, sent=sent.isoformat(), codes=xml),
        "received_at": sent, "updated_at": sent,
    }  # fmt: skip
    alert_id = conn.execute(insert(cap_alerts).values(**row)).inserted_primary_key[0]
    for code in codes:
        conn.execute(
            text("INSERT INTO cap_alert_geocodes (alert_id, code_id) VALUES (:a, :c)"),
            {"a": alert_id, "c": encode_code(code)},
        )
    conn.execute(
        insert(cap_alert_vtec).values(
            alert_id=alert_id,
            position=0,
            product_class="O",
            action=action,
            office="KOUN",
            phenomenon="TO",
            significance="A",
            etn=201,
            year=2026,
            begin=T0,
            end=None,
        )  # fmt: skip
    )
    return int(alert_id)


def test_stored_alerts_get_positions_and_code_states_and_keep_their_rows(
    empty_database: str,
) -> None:
    engine = make_engine(empty_database)
    try:
        config = alembic_config(engine)
        command.upgrade(config, BEFORE)
        with engine.begin() as conn:
            new = add_alert(conn, "new", 0, "NEW", ["040109", "040017", "OKC109", "OKC017"])
            add_alert(conn, "can", 30, "CAN", ["040109", "OKC109"])
            conn.execute(
                insert(eas_forward_queue).values(
                    alert_id=new, event_code="TOA", queued_at=T0, state="pending", reason=""
                )
            )
        command.upgrade(config, REVISION)
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT code_id, position, state FROM cap_alert_geocodes "
                    "WHERE alert_id = :a ORDER BY position"
                ),
                {"a": new},
            ).all()
            assert [(r.code_id, r.position, r.state) for r in rows] == [
                (encode_code("040109"), 0, "cancelled"),
                (encode_code("040017"), 1, "active"),
                (encode_code("OKC109"), 2, "cancelled"),
                (encode_code("OKC017"), 3, "active"),
            ]
            states = dict(conn.execute(select(cap_alerts.c.identifier, cap_alerts.c.state)).all())
            assert states == {"new": "active", "can": "cancelled"}
            queue = conn.execute(text("SELECT alert_id, state FROM eas_forward_queue")).all()
            assert [tuple(r) for r in queue] == [(new, "pending")]
            vtec = conn.execute(text("SELECT COUNT(*) FROM cap_alert_vtec")).scalar()
            assert vtec == 2
        command.downgrade(config, BEFORE)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM cap_alert_geocodes")).scalar() == 6
            assert conn.execute(text("SELECT COUNT(*) FROM eas_forward_queue")).scalar() == 1
    finally:
        engine.dispose()
