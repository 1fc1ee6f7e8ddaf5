"""Audio sources and radio receivers over HTTP on both backends: CRUD, preflight, secrets."""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import pytest
from sqlalchemy import Engine, select

from alertstation.audio.preflight import FORBIDDEN
from alertstation.audio.sources import set_status
from alertstation.audio.tables import audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.audio.writers import SINE_COMMAND
from tests.support import SignedIn, StationHarness

SOURCES = "/api/audio/sources"
RECEIVERS = "/api/radio/receivers"
PASSWORD = "s3cret-Stream-Pa55"
HEADER = "Bearer tok-9f8e7d6c5b4a"
MP3 = Canned(b"\xff\xfb\x90\x00" * 2048, content_type="audio/mpeg", headers={"icy-name": "WX"})


def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def stream_body(server: FeedServer, path: str = "/live", **extra: Any) -> dict[str, Any]:
    return {
        "name": "Neighbour FM",
        "kind": "stream",
        "url": server.url(path),
        "device_params": {"auth_username": "monitor", "auth_password": PASSWORD},
        **extra,
    }


def stored_row(engine: Engine, source_id: int) -> Any:
    with engine.connect() as conn:
        return conn.execute(select(audio_sources).where(audio_sources.c.id == source_id)).one()


def audit_details(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        rows = conn.execute(select(audit_logs).where(audit_logs.c.target == "audio"))
        return [json.dumps(row._asdict(), default=str) for row in rows]


# --- access rules -----------------------------------------------------------------------------


ROUTES = [
    ("GET", SOURCES),
    ("POST", SOURCES),
    ("GET", SOURCES + "/1"),
    ("PUT", SOURCES + "/1"),
    ("DELETE", SOURCES + "/1"),
    ("POST", SOURCES + "/1/restart"),
    ("POST", SOURCES + "/test-stream"),
    ("GET", RECEIVERS),
    ("POST", RECEIVERS),
    ("GET", RECEIVERS + "/1"),
    ("PUT", RECEIVERS + "/1"),
    ("DELETE", RECEIVERS + "/1"),
    ("GET", RECEIVERS + "/1/diagnostics"),
    ("POST", RECEIVERS + "/1/restart"),
]


def test_every_route_needs_receivers_configure(audio_station: StationHarness) -> None:
    audio_station.add_user("watcher", "viewer")
    viewer = audio_station.sign_in("watcher")
    for method, path in ROUTES:
        anonymous = audio_station.client.simulate_request(method, path, json={})
        assert anonymous.status_code == 401, (method, path)
        assert viewer.request(method, path, json={}).status_code == 403, (method, path)


# --- create with the preflight ----------------------------------------------------------------


def test_create_runs_the_preflight_with_credentials_and_never_answers_the_password(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    created = ops.request("POST", SOURCES, json=stream_body(stream_server))
    assert created.status_code == 201, created.text
    answer = created.json
    assert answer["auth_password_set"] is True
    assert answer["device_params"] == {"auth_username": "monitor"}
    assert answer["preflight"]["status"] == 200 and answer["preflight"]["icy_name"] == "WX"
    assert answer["state"] == "starting" and answer["kind"] == "stream"
    for field in ("id", "name", "url", "error_message", "level_dbfs", "icy_title"):
        assert field in answer
    assert "last_audio_at" in answer
    seen = stream_server.seen("/live")
    assert seen and seen[0].headers["authorization"] == basic("monitor", PASSWORD)
    listed = ops.request("GET", SOURCES)
    one = ops.request("GET", f"{SOURCES}/{answer['id']}")
    for response in (created, listed, one):
        assert PASSWORD not in response.text
    assert [item["id"] for item in listed.json["items"]] == [answer["id"]]
    assert one.json["auth_password_set"] is True
    assert stored_row(audio_station.engine, answer["id"]).auth_password == PASSWORD
    details = audit_details(audio_station.engine)
    assert details and all(PASSWORD not in text for text in details)
    assert "auth_password" in details[0]  # the field name is recorded, not its value


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "HTTP 401"),
        (403, FORBIDDEN),
        (404, "HTTP 404"),
        (503, "HTTP 503"),
    ],
)
def test_a_failed_preflight_blocks_creation_with_the_real_status(
    audio_station: StationHarness, stream_server: FeedServer, status: int, expected: str
) -> None:
    stream_server.serve("/live", Canned(b"no", status=status, content_type="text/plain"))
    ops = operator(audio_station)
    refused = ops.request("POST", SOURCES, json=stream_body(stream_server))
    assert refused.status_code == 422, refused.text
    error = refused.json["error"]
    assert error["code"] == "preflight_failed"
    assert error["details"]["status"] == status
    assert expected in error["message"] and expected in error["details"]["upstream_message"]
    assert ops.request("GET", SOURCES).json["items"] == []
    forced = ops.request("POST", SOURCES, json=stream_body(stream_server, skip_url_check=True))
    assert forced.status_code == 201, forced.text
    assert "preflight" not in forced.json


def test_an_unreachable_stream_blocks_creation(audio_station: StationHarness) -> None:
    ops = operator(audio_station)
    body = {"name": "Gone", "kind": "stream", "url": "http://127.0.0.1:9/live"}
    refused = ops.request("POST", SOURCES, json=body)
    assert refused.status_code == 422
    assert refused.json["error"]["details"]["status"] is None


@pytest.mark.parametrize("status", [200, 401, 403, 404])
def test_test_stream_reports_the_real_status(
    audio_station: StationHarness, stream_server: FeedServer, status: int
) -> None:
    answer = MP3 if status == 200 else Canned(b"x", status=status, content_type="text/plain")
    stream_server.serve("/live", answer)
    ops = operator(audio_station)
    body = {"url": stream_server.url("/live"), "device_params": {"auth_header": HEADER}}
    result = ops.request("POST", SOURCES + "/test-stream", json=body)
    assert result.status_code == 200, result.text
    assert result.json["status"] == status
    assert result.json["ok"] is (status == 200)
    assert str(status) in result.json["message"]
    if status == 403:
        assert result.json["message"].startswith(FORBIDDEN)
    assert stream_server.seen("/live")[0].headers["authorization"] == HEADER
    assert HEADER not in result.text


def test_test_stream_uses_a_stored_sources_credentials(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    result = ops.request("POST", SOURCES + "/test-stream", json={"id": source["id"]})
    assert result.json["ok"] is True
    assert stream_server.seen("/live")[-1].headers["authorization"] == basic("monitor", PASSWORD)


# --- playlists --------------------------------------------------------------------------------


def test_an_m3u_playlist_resolves_to_its_first_reachable_entry(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    playlist = f"#EXTM3U\n#EXTINF:-1,dead\n{stream_server.url('/dead')}\n/live\n".encode()
    stream_server.serve("/list.m3u", Canned(playlist, content_type="audio/x-mpegurl"))
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    created = ops.request("POST", SOURCES, json=stream_body(stream_server, "/list.m3u"))
    assert created.status_code == 201, created.text
    assert created.json["preflight"]["resolved_url"] == stream_server.url("/live")
    assert stream_server.seen("/dead"), "the first entry was tried"
    for path in ("/list.m3u", "/live"):
        assert stream_server.seen(path)[0].headers["authorization"] == basic("monitor", PASSWORD)


def test_a_pls_playlist_resolves_and_reports_the_entries_failure(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    pls = f"[playlist]\nNumberOfEntries=1\nFile1={stream_server.url('/locked')}\n".encode()
    stream_server.serve("/list.pls", Canned(pls, content_type="audio/x-scpls"))
    stream_server.serve("/locked", Canned(b"", status=403, content_type="text/plain"))
    ops = operator(audio_station)
    result = ops.request(
        "POST", SOURCES + "/test-stream", json={"url": stream_server.url("/list.pls")}
    )
    assert result.json["ok"] is False and result.json["status"] == 403
    stream_server.serve("/locked", MP3)
    again = ops.request(
        "POST", SOURCES + "/test-stream", json={"url": stream_server.url("/list.pls")}
    )
    assert again.json["ok"] is True, again.json
    assert again.json["resolved_url"] == stream_server.url("/locked")


# --- edits ------------------------------------------------------------------------------------


def test_a_blank_password_on_edit_keeps_the_stored_one_and_null_clears_it(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    path = f"{SOURCES}/{source['id']}"
    kept = ops.request(
        "PUT",
        path,
        json={
            "name": "Renamed",
            "device_params": {"auth_username": "monitor", "auth_password": ""},
        },
    )
    assert kept.status_code == 200, kept.text
    assert kept.json["changed"] == ["name"]
    assert kept.json["auth_password_set"] is True
    assert stored_row(audio_station.engine, source["id"]).auth_password == PASSWORD
    orphan = ops.request("PUT", path, json={"device_params": {}})
    assert orphan.status_code == 422
    assert orphan.json["error"]["details"]["field"] == "device_params.auth_username"
    cleared = ops.request(
        "PUT", path, json={"device_params": {"auth_password": None, "auth_header": HEADER}}
    )
    assert cleared.status_code == 200, cleared.text
    assert cleared.json["auth_password_set"] is False and cleared.json["auth_header_set"] is True
    assert HEADER not in cleared.text
    row = stored_row(audio_station.engine, source["id"])
    assert row.auth_password is None and row.auth_header == HEADER
    assert all(HEADER not in text for text in audit_details(audio_station.engine))


def test_a_url_on_another_origin_drops_the_stored_secrets_unless_entered_again(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    stream_server.serve("/other", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    path = f"{SOURCES}/{source['id']}"
    same_origin = ops.request("PUT", path, json={"url": stream_server.url("/other")})
    assert same_origin.status_code == 200 and same_origin.json["auth_password_set"] is True
    with running_server() as elsewhere:
        moved = ops.request("PUT", path, json={"url": elsewhere.url("/live")})
        assert moved.status_code == 200, moved.text
        assert moved.json["auth_password_set"] is False
        assert sorted(moved.json["changed"]) == ["auth_password", "url"]
        assert stored_row(audio_station.engine, source["id"]).auth_password is None
        assert all(PASSWORD not in text for text in audit_details(audio_station.engine))
        # Entered again in the same request, a secret goes with the new origin.
        back = ops.request(
            "PUT",
            path,
            json={"url": stream_server.url("/live"), "device_params": {"auth_header": HEADER}},
        )
        assert back.status_code == 200 and back.json["auth_header_set"] is True
        header_moved = ops.request("PUT", path, json={"url": elsewhere.url("/live")})
        assert header_moved.json["auth_header_set"] is False
        assert stored_row(audio_station.engine, source["id"]).auth_header is None
        assert elsewhere.seen() == []


def test_test_stream_with_an_id_refuses_another_origin(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    with running_server() as elsewhere:
        elsewhere.serve("/x", MP3)
        for url in (elsewhere.url("/x"), stream_server.url("/x").replace("http:", "https:")):
            refused = ops.request(
                "POST", SOURCES + "/test-stream", json={"id": source["id"], "url": url}
            )
            assert refused.status_code == 422, refused.text
            assert refused.json["error"]["details"]["field"] == "url"
        assert elsewhere.seen() == []
    same = ops.request(
        "POST",
        SOURCES + "/test-stream",
        json={"id": source["id"], "url": stream_server.url("/live")},
    )
    assert same.json["ok"] is True
    assert stream_server.seen("/live")[-1].headers["authorization"] == basic("monitor", PASSWORD)


BAD_EDITS = [
    ({"url": "ftp://example.org/live"}, "url"),
    ({"url": "http://user:pw@127.0.0.1/live"}, "url"),
    ({"device_params": {"auth_token": "x"}}, "device_params.auth_token"),
    ({"kind": "receiver"}, "kind"),
    ({"command": ["/bin/cat"]}, "command"),
    ({"colour": "red"}, "colour"),
    ({"enabled": "yes"}, "enabled"),
]


def test_bad_stream_edits_are_refused_and_change_nothing(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    for body, field in BAD_EDITS:
        refused = ops.request("PUT", f"{SOURCES}/{source['id']}", json={**body, "name": "New"})
        assert refused.status_code == 422, refused.text
        assert refused.json["error"]["details"]["field"] == field
    after = ops.request("GET", f"{SOURCES}/{source['id']}").json
    assert (after["name"], after["url"], after["updated_at"]) == (
        source["name"],
        source["url"],
        source["updated_at"],
    )


def test_names_are_unique(audio_station: StationHarness, stream_server: FeedServer) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    assert ops.request("POST", SOURCES, json=stream_body(stream_server)).status_code == 201
    again = ops.request("POST", SOURCES, json=stream_body(stream_server))
    assert again.status_code == 409


def test_restart_clears_fatal_and_delete_removes(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    source = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    with begin_write(audio_station.engine) as conn:
        set_status(conn, source["id"], state="fatal", error_message="HTTP 401 Unauthorized")
    fatal = ops.request("GET", f"{SOURCES}/{source['id']}").json
    assert fatal["state"] == "fatal" and "401" in fatal["error_message"]
    restarted = ops.request("POST", f"{SOURCES}/{source['id']}/restart")
    assert restarted.status_code == 202
    assert restarted.json["state"] == "starting" and restarted.json["error_message"] is None
    assert ops.request("DELETE", f"{SOURCES}/{source['id']}").status_code == 200
    assert ops.request("GET", f"{SOURCES}/{source['id']}").status_code == 404


# --- receivers --------------------------------------------------------------------------------


def test_a_receiver_runs_only_an_allowlisted_program(audio_station: StationHarness) -> None:
    ops = operator(audio_station)
    body = {"name": "NOAA 162.55", "command": ["/usr/bin/rtl_fm", "-f", "162.55M"]}
    refused = ops.request("POST", RECEIVERS, json=body)
    assert refused.status_code == 422
    assert "not on the receiver allowlist" in refused.json["error"]["message"]
    shell = ops.request("POST", RECEIVERS, json={**body, "command": "/bin/cat -"})
    assert shell.status_code == 422
    unwritten = ops.request(
        "POST", RECEIVERS, json={**body, "command": [sys.executable, "-c", "1"]}
    )
    assert unwritten.status_code == 422
    assert "arguments an admin wrote" in unwritten.json["error"]["message"]
    allowed = {
        "name": "NOAA 162.55",
        "command": SINE_COMMAND,
        "device_params": {"sample_rate": 22050},
    }
    created = ops.request("POST", RECEIVERS, json=allowed)
    assert created.status_code == 201, created.text
    receiver = created.json
    assert receiver["kind"] == "receiver" and receiver["command"] == allowed["command"]
    assert receiver["device_params"] == {"sample_rate": 22050, "channels": 1}
    diagnostics = ops.request("GET", f"{RECEIVERS}/{receiver['id']}/diagnostics")
    assert diagnostics.status_code == 200
    assert diagnostics.json["on_allowlist"] is True
    assert diagnostics.json["command_allowed"] is True
    assert diagnostics.json["program_executable"] is True
    assert diagnostics.json["sample_rate"] == 22050
    moved = ops.request(
        "PUT", f"{RECEIVERS}/{receiver['id']}", json={"command": ["/usr/bin/env", "sh"]}
    )
    assert moved.status_code == 422
    assert ops.request("GET", f"{RECEIVERS}/{receiver['id']}").json["command"] == allowed["command"]
    assert ops.request("POST", f"{RECEIVERS}/{receiver['id']}/restart").status_code == 202
    assert [s["id"] for s in ops.request("GET", SOURCES).json["items"]] == [receiver["id"]]


def test_receiver_routes_do_not_touch_streams(
    audio_station: StationHarness, stream_server: FeedServer
) -> None:
    stream_server.serve("/live", MP3)
    ops = operator(audio_station)
    stream = ops.request("POST", SOURCES, json=stream_body(stream_server)).json
    assert ops.request("GET", RECEIVERS).json["items"] == []
    assert ops.request("GET", f"{RECEIVERS}/{stream['id']}").status_code == 404
    assert ops.request("DELETE", f"{RECEIVERS}/{stream['id']}").status_code == 404
    made = ops.request("POST", RECEIVERS, json={**stream_body(stream_server)})
    assert made.status_code == 422
