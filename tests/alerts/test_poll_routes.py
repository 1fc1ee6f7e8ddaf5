"""Poller routes over HTTP on both backends: poll now, import a file, sources, the status page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from alertstation.alerts.poll.resources import IMPORT_MAX_BYTES
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.support import SignedIn, StationHarness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW = (FIXTURES / "cap12_svr_new.xml").read_bytes()
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"
BOUNDARY = "poll-test-boundary"
SOURCES = "/admin/poller/sources"


@pytest.fixture
def server() -> Iterator[FeedServer]:
    with running_server() as feed_server:
        yield feed_server


def signed_in(station: StationHarness, role: str) -> SignedIn:
    station.add_user(f"user-{role}", role)
    return station.sign_in(f"user-{role}")


def multipart(name: str, data: bytes) -> tuple[bytes, dict[str, str]]:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/xml\r\n\r\n"
    )
    body = head.encode() + data + f"\r\n--{BOUNDARY}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


def audit_rows(engine: Engine, target: str) -> list[Any]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs).where(audit_logs.c.target == target).order_by(audit_logs.c.id)
        )
        return list(rows.all())


def alert_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(cap_alerts)).scalar_one())


def add_source(admin: SignedIn, **body: Any) -> dict[str, Any]:
    created = admin.request("POST", SOURCES, json=body)
    assert created.status_code == 201, created.text
    return created.json


# --- access rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/admin/trigger_poll"),
        ("POST", "/admin/import_alert"),
        ("POST", SOURCES),
        ("PUT", SOURCES + "/1"),
        ("DELETE", SOURCES + "/1"),
    ],
)
def test_changes_need_sign_in_system_configure_and_csrf(
    station: StationHarness, method: str, path: str
) -> None:
    assert station.client.simulate_request(method, path).status_code == 401
    viewer = signed_in(station, "viewer")
    assert viewer.request(method, path, json={}).status_code == 403
    operator = signed_in(station, "operator")
    refused = operator.request(method, path, csrf=False, json={})
    assert refused.status_code == 403 and refused.json["error"]["code"] == "csrf_failed"


def test_listing_sources_needs_view_config(station: StationHarness) -> None:
    assert station.client.simulate_get(SOURCES).status_code == 401
    assert signed_in(station, "demo").request("GET", SOURCES).status_code == 403
    assert signed_in(station, "viewer").request("GET", SOURCES).json == {"sources": []}


# --- sources --------------------------------------------------------------------------------


def test_source_lifecycle_is_validated_and_audited(
    station: StationHarness, server: FeedServer
) -> None:
    admin = signed_in(station, "admin")
    url = server.url("/feed.xml").replace("http://", "http://reader:hunter2@")
    created = add_source(admin, name="Local feed", kind="cap-xml", url=url, interval_seconds=30)
    source_id = created["id"]
    assert created["url"] == server.url("/feed.xml")  # the credentials are not shown back
    assert created["url_has_credentials"] is True
    assert "hunter2" not in str(created)
    assert (created["health"], created["interval_seconds"], created["host"]) == (
        "pending",
        30,
        f"127.0.0.1:{server.port}",
    )

    duplicate = admin.request("POST", SOURCES, json={"name": "Local feed", "kind": "json-api"})
    assert duplicate.status_code == 409
    bad = admin.request("POST", SOURCES, json={"name": "x", "kind": "cap-xml", "url": "ftp://h/"})
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == "url"

    changed = admin.request("PUT", f"{SOURCES}/{source_id}", json={"interval_seconds": 120})
    assert changed.status_code == 200 and changed.json["changed"] == ["interval_seconds"]
    assert admin.request("PUT", f"{SOURCES}/{source_id}", json={"kind": "x"}).status_code == 422
    assert admin.request("PUT", f"{SOURCES}/999999", json={}).status_code == 404

    listed = admin.request("GET", SOURCES).json["sources"]
    assert [(s["id"], s["interval_seconds"]) for s in listed] == [(source_id, 120)]

    removed = admin.request("DELETE", f"{SOURCES}/{source_id}")
    assert removed.json == {"deleted": source_id, "name": "Local feed"}
    assert admin.request("DELETE", f"{SOURCES}/{source_id}").status_code == 404

    rows = audit_rows(station.engine, "poller")
    changes = [(row.action, row.details) for row in rows]
    assert [action for action, _ in changes] == ["config.updated"] * 3
    assert '"change":"created"' in changes[0][1] and '"url"' in changes[0][1]
    assert '"fields":["interval_seconds"]' in changes[1][1]
    assert '"change":"deleted"' in changes[2][1]
    assert all("hunter2" not in details for _, details in changes)


def test_changing_the_url_forgets_the_validators(
    station: StationHarness, server: FeedServer
) -> None:
    admin = signed_in(station, "admin")
    server.serve("/a.xml", Canned(NEW, content_type="application/xml", etag='"e1"'))
    source_id = add_source(admin, name="a", kind="cap-xml", url=server.url("/a.xml"))["id"]
    admin.request("POST", "/admin/trigger_poll")
    shown = admin.request("GET", SOURCES).json["sources"][0]
    assert shown["conditional"]["etag"] is True
    moved = admin.request("PUT", f"{SOURCES}/{source_id}", json={"url": server.url("/b.xml")})
    assert moved.json["conditional"]["etag"] is False
    assert moved.json["next_attempt"] == station.clock().isoformat()


# --- trigger_poll ---------------------------------------------------------------------------


def test_trigger_poll_polls_every_enabled_source_and_answers_per_source(
    station: StationHarness, server: FeedServer
) -> None:
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    server.serve("/ok.xml", Canned(NEW, content_type="application/xml"))
    server.serve("/down.xml", Canned(b"no", status=502, content_type="text/plain"))
    admin = signed_in(station, "admin")
    add_source(admin, name="good", kind="cap-xml", url=server.url("/ok.xml"))
    add_source(admin, name="bad", kind="cap-xml", url=server.url("/down.xml"))
    add_source(admin, name="off", kind="cap-xml", url=server.url("/off.xml"), enabled=False)

    answer = admin.request("POST", "/admin/trigger_poll")
    assert answer.status_code == 200
    assert (answer.json["polled"], answer.json["failed"], answer.json["stored"]) == (2, 1, 1)
    by_name = {source["name"]: source for source in answer.json["sources"]}
    assert (by_name["good"]["outcome"], by_name["good"]["stored"]) == ("ok", 1)
    assert (by_name["bad"]["outcome"], by_name["bad"]["status"]) == ("failed", 502)
    assert by_name["bad"]["error"] == "HTTP 502 Bad Gateway"
    assert not server.seen("/off.xml")
    assert alert_count(station.engine) == 1
    [row] = audit_rows(station.engine, "alerts.trigger_poll")
    assert row.action == "config.updated"


def test_trigger_poll_with_no_sources_says_how_to_add_one(station: StationHarness) -> None:
    answer = signed_in(station, "admin").request("POST", "/admin/trigger_poll")
    assert answer.json["polled"] == 0 and "/admin/poller/sources" in answer.json["note"]


# --- import_alert ---------------------------------------------------------------------------


def test_import_of_an_uploaded_file_stores_it_even_out_of_area(station: StationHarness) -> None:
    admin = signed_in(station, "admin")
    body, headers = multipart("svr.xml", NEW)
    answer = admin.request("POST", "/admin/import_alert", body=body, headers=headers)
    assert answer.status_code == 200, answer.text
    [alert] = answer.json["alerts"]
    assert (alert["identifier"], alert["outcome"], alert["area"]) == (
        NEW_ID,
        "stored",
        "out-of-area",
    )
    assert alert["state"] == "expired"  # the sample is from 2025
    assert answer.json["stored"] == 1 and answer.json["skipped"] == []
    again = admin.request(
        "POST", "/admin/import_alert", body=NEW, headers={"Content-Type": "application/cap+xml"}
    )
    assert again.json["alerts"][0]["outcome"] == "duplicate"
    assert alert_count(station.engine) == 1
    rows = audit_rows(station.engine, "alerts.import_alert")
    assert len(rows) == 2 and '"file":"svr.xml"' in rows[0].details


def test_import_in_area_reports_in_area(station: StationHarness) -> None:
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["OKC109"])
    admin = signed_in(station, "admin")
    answer = admin.request(
        "POST", "/admin/import_alert", body=NEW, headers={"Content-Type": "text/xml"}
    )
    assert answer.json["alerts"][0]["in_area"] is True


def test_a_feed_with_one_bad_entry_stores_the_rest(station: StationHarness) -> None:
    feed = (FIXTURES / "api_feed.json").read_bytes()
    answer = signed_in(station, "admin").request(
        "POST", "/admin/import_alert", body=feed, headers={"Content-Type": "application/geo+json"}
    )
    assert answer.status_code == 200
    assert answer.json["stored"] == 5 and len(answer.json["skipped"]) == 1
    assert "yesterday evening" in answer.json["skipped"][0]["reason"]


def test_a_malformed_file_is_400_with_the_parser_message_and_nothing_stored(
    station: StationHarness,
) -> None:
    admin = signed_in(station, "admin")
    body, headers = multipart("bad.xml", b"<alert><unclosed></alert>")
    answer = admin.request("POST", "/admin/import_alert", body=body, headers=headers)
    assert answer.status_code == 400
    assert answer.json["error"]["code"] == "malformed_alert"
    assert "malformed XML" in answer.json["error"]["message"]
    evil = b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'
    refused = admin.request(
        "POST", "/admin/import_alert", body=evil, headers={"Content-Type": "application/xml"}
    )
    assert refused.status_code == 400 and "DOCTYPE" in refused.json["error"]["message"]
    assert alert_count(station.engine) == 0
    assert audit_rows(station.engine, "alerts.import_alert") == []


def test_import_refuses_other_media_types_empty_and_oversized_bodies(
    station: StationHarness,
) -> None:
    admin = signed_in(station, "admin")
    post = admin.request
    text = post("POST", "/admin/import_alert", body=NEW, headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    empty = post("POST", "/admin/import_alert", body=b"", headers={"Content-Type": "text/xml"})
    assert empty.status_code == 400
    huge = b"<a>" + b" " * (IMPORT_MAX_BYTES + 70_000) + b"</a>"
    big = post("POST", "/admin/import_alert", body=huge, headers={"Content-Type": "text/xml"})
    assert big.status_code == 413
    body, headers = multipart("big.xml", huge[: IMPORT_MAX_BYTES + 10])
    assert post("POST", "/admin/import_alert", body=body, headers=headers).status_code == 413
    assert alert_count(station.engine) == 0


# --- status -------------------------------------------------------------------------------


def test_system_status_lists_source_health_without_urls(
    station: StationHarness, server: FeedServer
) -> None:
    assert station.client.simulate_get("/api/system_status").json["sources"] == []
    server.serve("/down.xml", Canned(b"no", status=500, content_type="text/plain"))
    admin = signed_in(station, "admin")
    url = server.url("/down.xml").replace("http://", "http://u:secret@")
    add_source(admin, name="down", kind="cap-xml", url=url)
    admin.request("POST", "/admin/trigger_poll")
    status = station.client.simulate_get("/api/system_status").json
    [source] = status["sources"]
    assert (source["name"], source["health"], source["last_status"]) == ("down", "degraded", 500)
    assert source["consecutive_failures"] == 1
    assert "url" not in source and "last_error" not in source
    assert str(server.port) not in str(status) and "secret" not in str(status)


def test_status_page_shows_the_health_table(station: StationHarness, server: FeedServer) -> None:
    assert station.client.simulate_get("/status").status_code == 401
    viewer = signed_in(station, "viewer")
    empty = viewer.request("GET", "/status")
    assert empty.status_code == 200
    assert 'id="sources-empty"' in empty.text and "alertstation poll sources add" in empty.text
    assert 'id="poll-now"' not in empty.text

    server.serve("/ok.xml", Canned(NEW, content_type="application/xml"))
    server.serve("/down.xml", Canned(b"no", status=500, content_type="text/plain"))
    admin = signed_in(station, "admin")
    add_source(admin, name="Good feed", kind="cap-xml", url=server.url("/ok.xml"))
    add_source(admin, name="Bad feed", kind="cap-xml", url=server.url("/down.xml"))
    admin.request("POST", "/admin/trigger_poll")

    page = admin.request("GET", "/status")
    assert page.status_code == 200
    assert 'id="sources-table"' in page.text and 'id="poll-now"' in page.text
    assert 'data-health="healthy"' in page.text and 'data-health="degraded"' in page.text
    assert "Good feed" in page.text and f"127.0.0.1:{server.port}" in page.text
    assert "HTTP 500 Internal Server Error" in page.text
    assert 'id="system-status"' in page.text
