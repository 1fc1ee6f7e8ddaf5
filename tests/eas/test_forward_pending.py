"""The approval queue: a hold airs after its time, an operator's Hold keeps it, Reject and
expiry drop it; rules are saved through the API (audited); a 2.10 station's rules on upgrade.

Both backends, the station's injected clock; CAP alerts imported as the poller does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest
import sqlalchemy as sa
from alembic import command

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.poll.fetch import HttpClient
from alertstation.alerts.poll.poller import Poller
from alertstation.alerts.poll.sources import create_source, read_config
from alertstation.alerts.service import ImportProblem
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import alembic_config, upgrade_to_head
from alertstation.eas.forward import pending
from alertstation.eas.forward import service as forward
from alertstation.eas.forward.rulebook import get_rule_book
from tests.alerts.feed_server import Canned, running_server
from tests.eas.test_forward_support import (
    archived,
    audit_rows,
    cap_message,
    configure,
    ingest,
    later,
    queue_states,
    vtec,
)
from tests.support import SignedIn, StationHarness

HOLD_2 = {"rules": [{"events": ["TOR"], "mode": "hold", "hold_minutes": 2}]}


@pytest.fixture
def users(station: StationHarness) -> dict[str, SignedIn]:
    for role in ("admin", "operator", "viewer"):
        station.add_user(role, role)
    return {role: station.sign_in(role) for role in ("admin", "operator", "viewer")}


def tornado(station: StationHarness, minutes: int = 70) -> bytes:
    now = station.clock.now
    expires = later(now, minutes=minutes)
    return cap_message("tor", now, expires=expires, vtec_strings=[vtec("NEW", 7, now, expires)])


def held_tornado(station: StationHarness, users: dict[str, SignedIn]) -> dict:
    """Save a hold-2-minutes rule through the API, import a Tornado Warning, run the job."""
    st = station.app.station
    configure(st, forward_events=())
    answer = users["admin"].request("PUT", "/api/eas/forward/rules", json=HOLD_2)
    assert answer.status_code == 200, answer.text
    ingest(st, tornado(station), station.clock.now)
    forward.forward_job(st)
    (item,) = users["viewer"].request("GET", "/api/eas/pending").json["items"]
    return item


def test_a_hold_airs_after_its_time(station: StationHarness, users: dict[str, SignedIn]) -> None:
    start = station.clock.now
    item = held_tornado(station, users)
    assert (item["origin"], item["source"], item["rule"], item["mode"]) == (
        "forward",
        "poll",
        "rule 1",
        "hold",
    )
    assert item["header"].startswith("ZCZC-WXR-TOR-040109+")
    assert datetime.fromisoformat(item["air_at"]) == start + timedelta(minutes=2)
    assert datetime.fromisoformat(item["expires_at"]) == later(start, minutes=70).replace(
        microsecond=0
    )
    (row,) = audit_rows(station.engine, "config.updated")
    assert (row.target, orjson.loads(row.details)) == (
        "eas_forward_rules",
        {
            "fields": ["rules"],
            "changes": {  # the rule added, not both whole lists
                "rules": {
                    "added": [
                        {
                            "events": ["TOR"],
                            "originators": [],
                            "sources": [],
                            "areas": [],
                            "mode": "hold",
                            "hold_minutes": 2,
                        }
                    ],
                    "removed": [],
                }
            },
        },
    )

    station.clock.advance(seconds=119)
    forward.forward_job(station.app.station)
    assert archived(station.engine) == []
    station.clock.advance(seconds=2)
    forward.forward_job(station.app.station)
    (aired,) = archived(station.engine)
    assert aired.header.split("+")[0] == item["header"].split("+")[0]  # issued when it airs
    assert users["viewer"].request("GET", "/api/eas/pending").json["items"] == []


def test_an_operators_hold_keeps_it_until_forward_now(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    item = held_tornado(station, users)
    url = f"/api/eas/pending/{item['id']}"
    assert users["viewer"].request("POST", url + "/hold").status_code == 403
    held = users["operator"].request("POST", url + "/hold")
    assert held.status_code == 200, held.text
    assert (held.json["item"]["state"], held.json["item"]["air_at"]) == ("held", None)
    station.clock.advance(minutes=5)
    forward.forward_job(station.app.station)
    assert archived(station.engine) == []
    page = users["operator"].request("GET", "/eas/pending")
    assert "Held by operator" in page.text and "Forward now" in page.text

    assert users["operator"].request("POST", url + "/forward").status_code == 200
    forward.forward_job(station.app.station)
    assert len(archived(station.engine)) == 1
    actions = [row.action for row in audit_rows(station.engine, "eas.pending.hold")]
    actions += [row.action for row in audit_rows(station.engine, "eas.pending.forward")]
    assert actions == ["eas.pending.hold", "eas.pending.forward"]
    assert users["operator"].request("POST", url + "/reject").json["error"]["code"] == "not_pending"


def test_rejected_and_expired_messages_never_air(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    st = station.app.station
    configure(st, forward_events=())  # no rule: the default, manual approval
    ingest(st, tornado(station, minutes=5), station.clock.now)
    forward.forward_job(st)
    (item,) = users["viewer"].request("GET", "/api/eas/pending").json["items"]
    assert (item["mode"], item["rule"], item["air_at"]) == ("manual", "default", None)
    station.clock.advance(minutes=6)
    forward.forward_job(st)
    assert queue_states(station.engine)["tor"] == ("skipped", "expired on the approval queue")
    answer = users["operator"].request("POST", f"/api/eas/pending/{item['id']}/forward")
    assert answer.status_code == 409
    assert archived(station.engine) == []


def test_bad_rules_are_422_and_nothing_changes(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    bad = {"rules": [{"mode": "hold", "hold_minutes": 0}]}
    answer = users["admin"].request("PUT", "/api/eas/forward/rules", json=bad)
    assert answer.status_code == 422
    assert answer.json["error"]["details"]["field"] == "rules[0].hold_minutes"
    assert users["viewer"].request("PUT", "/api/eas/forward/rules", json=HOLD_2).status_code == 403
    assert users["viewer"].request("GET", "/api/eas/forward/rules").json == {
        "rules": [],
        "default": {"mode": "manual"},
    }


def test_a_2_10_station_keeps_what_it_forwarded(empty_database: str) -> None:
    engine = make_engine(empty_database)
    try:
        command.upgrade(alembic_config(engine), "20261129_station_time_zone")
        now = datetime(2026, 11, 28, tzinfo=UTC)
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO eas_forward_settings (id, enabled, station_id, attention_seconds,"
                    " nwr_tone, include_voice, max_age_minutes) VALUES (1, :on, 'X', 8, :off,"
                    " :off, 60)"
                ),
                {"on": True, "off": False},
            )
            conn.execute(
                sa.text("INSERT INTO alert_settings (key, value, updated_at) VALUES (:k, :v, :t)"),
                {"k": "forward_events", "v": '["TOR", "SVR"]', "t": now},
            )
        upgrade_to_head(engine)
        with engine.connect() as conn:
            book = get_rule_book(conn).as_dict()
        assert book == {
            "rules": [
                {
                    "events": ["SVR", "TOR"],
                    "originators": [],
                    "sources": ["poll", "imported"],
                    "areas": [],
                    "mode": "auto",
                }
            ],
            "default": {"mode": "manual"},
        }
    finally:
        engine.dispose()


def test_a_waiting_alert_that_is_cancelled_is_withdrawn(station: StationHarness) -> None:
    st = station.app.station
    configure(st, forward_events=())
    now = station.clock.now
    ingest(st, tornado(station), now)
    forward.forward_job(st)
    cancel = cap_message(
        "tor-can",
        later(now, minutes=1),
        expires=later(now, minutes=70),
        msg_type="Cancel",
        vtec_strings=[vtec("CAN", 7, now, later(now, minutes=70))],
        refs=[("tor", now)],
    )
    ingest(st, cancel, later(now, minutes=1))
    station.clock.advance(minutes=1)
    forward.forward_job(st)
    with station.engine.connect() as conn:
        assert pending.list_open(conn) == []
    assert queue_states(station.engine)["tor"] == ("skipped", "alert is cancelled")


def test_a_rule_on_a_poll_source_matches_what_that_source_fetched(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    st = station.app.station
    configure(st, forward_events=())
    now = station.clock.now
    expires = later(now, minutes=70)
    fetched = cap_message(
        "polled", now, expires=expires, vtec_strings=[vtec("NEW", 7, now, expires)]
    )
    imported = cap_message(
        "uploaded", now, expires=expires, vtec_strings=[vtec("NEW", 8, now, expires)]
    )
    http = HttpClient()
    with running_server() as server:
        server.serve("/a.xml", Canned(fetched, content_type="application/xml"))
        with begin_write(st.engine) as conn:
            ours = create_source(
                conn,
                read_config({"name": "A", "kind": "cap-xml", "url": server.url("/a.xml")}),
                now,
            )
            other = create_source(
                conn,
                read_config({"name": "B", "kind": "cap-xml", "url": server.url("/b.xml")}),
                now,
            )
        rules = {
            "rules": [
                {"sources": [f"poll:{other}"], "mode": "auto"},
                {"sources": [f"poll:{ours}"], "mode": "hold", "hold_minutes": 5},
                {"sources": ["imported"], "mode": "hold", "hold_minutes": 7},
            ]
        }
        answer = users["admin"].request("PUT", "/api/eas/forward/rules", json=rules)
        assert answer.status_code == 200, answer.text
        poller = Poller(st.engine, clock=station.clock, rng=lambda: 0.25, http=http, parallel=1)
        outcomes = poller.poll_due()
    http.close()
    assert {o.name: o.stored for o in outcomes}["A"] == 1, outcomes
    (result,) = import_messages(st.engine, imported, "upload", explicit=True, now=now)
    assert not isinstance(result, ImportProblem), result
    forward.forward_job(st)

    items = users["viewer"].request("GET", "/api/eas/pending").json["items"]
    found = {(item["source"], item["rule"], item["mode"]) for item in items}
    assert found == {(f"poll:{ours}", "rule 2", "hold"), ("imported", "rule 3", "hold")}
    assert archived(station.engine) == []  # the other source's auto rule matched nothing
