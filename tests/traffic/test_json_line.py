"""JSON access logs as nginx, Caddy and Traefik write them (``traffic.json_line``)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from alertstation.traffic.enrich import MAX_STATUS, MIN_STATUS
from alertstation.traffic.importer import import_lines, parse_combined
from alertstation.traffic.json_line import go_seconds, parse_json
from alertstation.traffic.rows import MAX_BYTES
from alertstation.traffic.tables import web_request_logs
from alertstation.traffic.timestamps import END_TIME, FIRST_TIME
from tests.fuzz.fuzzing import NASTY, fuzz, mutated
from tests.traffic.conftest import empty

# The import test stores rows of a fixed date: the request log is emptied after each test, so no
# later test rolls up from that date with the real clock.
pytestmark = pytest.mark.usefixtures("clean_log")
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
REFERRER = "https://www.bing.com/search?q=nws+alert"
# The same request as each server logs it.
COMBINED = (
    f'203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET /alerts/7?x=1 HTTP/2.0" 200 2326 '
    f'"{REFERRER}" "{AGENT}"'
)
STARTED = datetime(2026, 10, 10, 20, 55, 36, tzinfo=UTC).timestamp()
CADDY = {  # Caddy 2's access logger, as it is by default
    "level": "info",
    "ts": STARTED,
    "logger": "http.log.access.log0",
    "msg": "handled request",
    "request": {
        "remote_ip": "10.0.0.2",  # the proxy in front; client_ip is the visitor
        "remote_port": "41342",
        "client_ip": "203.0.113.9",
        "proto": "HTTP/2.0",
        "method": "GET",
        "host": "alerts.example.org",
        "uri": "/alerts/7?x=1",
        "headers": {
            "User-Agent": [AGENT],
            "Accept": ["*/*"],
            "Referer": [REFERRER],
            "Accept-Language": ["en-US,en;q=0.5"],
        },
        "tls": {"resumed": False, "version": 772, "proto": "h2"},
    },
    "bytes_read": 0,
    "user_id": "",
    "duration": 0.012,
    "size": 2326,
    "status": 200,
    "resp_headers": {"Server": ["Caddy"], "Content-Type": ["text/html; charset=utf-8"]},
}
TRAEFIK = {  # Traefik's JSON access log, with the request headers kept
    "ClientAddr": "203.0.113.9:54321",
    "ClientHost": "203.0.113.9",
    "ClientPort": "54321",
    "ClientUsername": "-",
    "DownstreamContentSize": 2326,
    "DownstreamStatus": 200,
    "Duration": 12_000_000,
    "OriginContentSize": 2326,
    "OriginDuration": 11_500_000,
    "OriginStatus": 200,
    "Overhead": 500_000,
    "RequestAddr": "alerts.example.org",
    "RequestContentSize": 0,
    "RequestCount": 7,
    "RequestHost": "alerts.example.org",
    "RequestMethod": "GET",
    "RequestPath": "/alerts/7?x=1",
    "RequestPort": "-",
    "RequestProtocol": "HTTP/2.0",
    "RequestScheme": "https",
    "RetryAttempts": 0,
    "RouterName": "station@docker",
    "StartLocal": "2026-10-10T13:55:36-07:00",
    "StartUTC": "2026-10-10T20:55:36Z",
    "entryPointName": "websecure",
    "level": "info",
    "msg": "",
    "request_Accept-Language": "en-US,en;q=0.5",
    "request_Referer": REFERRER,
    "request_User-Agent": AGENT,
    "time": "2026-10-10T20:55:37Z",  # when the line was written, not when the request came
}


@pytest.mark.parametrize("record", [CADDY, TRAEFIK], ids=["caddy", "traefik"])
def test_caddy_and_traefik_lines_read_as_the_same_request_in_combined_format(
    record: dict,
) -> None:
    combined = parse_combined(COMBINED)
    seen = parse_json(json.dumps(record))
    assert combined is not None and seen is not None
    assert seen.response_ms == pytest.approx(12.0)
    assert seen.accept_language == "en-US,en;q=0.5"
    # The combined line carries neither the response time nor the language.
    assert replace(seen, response_ms=None, accept_language=None) == combined


def test_caddy_time_formats_durations_and_older_fields() -> None:
    iso = {**CADDY, "ts": "2026-10-10T20:55:36.250Z", "duration": "1m2.5s"}
    seen = parse_json(json.dumps(iso))
    assert seen is not None
    assert seen.ts == pytest.approx(STARTED + 0.25)
    assert seen.response_ms == pytest.approx(62_500.0)
    common = parse_json(json.dumps({**CADDY, "ts": "10/Oct/2026:13:55:36 -0700"}))
    assert common is not None and common.ts == STARTED
    older = {**CADDY, "request": {k: v for k, v in CADDY["request"].items() if k != "client_ip"}}
    seen = parse_json(json.dumps(older))  # before Caddy 2.7: no client_ip
    assert seen is not None and seen.client_ip == "10.0.0.2"
    bare = {**CADDY, "request": {"remote_ip": "192.0.2.4", "method": "HEAD", "uri": "/"}}
    seen = parse_json(json.dumps(bare))
    assert seen is not None and (seen.method, seen.path, seen.user_agent) == ("HEAD", "/", None)
    # Caddy's other log lines in the same file are not requests.
    started = {"level": "info", "ts": STARTED, "msg": "serving initial configuration"}
    assert parse_json(json.dumps(started)) is None
    assert parse_json(json.dumps({**CADDY, "ts": STARTED * 1000})) is None  # unix_milli


def test_traefik_reads_the_start_of_the_request_and_a_status_of_zero_is_no_answer() -> None:
    precise = {**TRAEFIK, "StartUTC": "2026-10-10T20:55:36.123456789Z"}
    seen = parse_json(json.dumps(precise))
    assert seen is not None and seen.ts == pytest.approx(STARTED + 0.123456)
    local = {k: v for k, v in TRAEFIK.items() if k != "StartUTC"}
    seen = parse_json(json.dumps(local))
    assert seen is not None and seen.ts == STARTED
    # The client went away before an answer: Traefik logs status 0.
    assert parse_json(json.dumps({**TRAEFIK, "DownstreamStatus": 0})) is None
    headless = {k: v for k, v in TRAEFIK.items() if not k.startswith("request_")}
    seen = parse_json(json.dumps(headless))  # Traefik's default drops the headers
    assert seen is not None and (seen.user_agent, seen.referrer) == (None, None)


def test_nginx_json_without_escape_json_keeps_its_escapes_as_the_combined_reading_does() -> None:
    # nginx escapes a quote as \x22 and each byte outside ASCII as \xHH unless the log_format
    # says escape=json; that is not JSON, and the same escapes appear in a combined line.
    escaped = r"GET /caf\xC3\xA9?q=\x22x\x22 HTTP/1.1"
    agent = r"Mozilla \x22quoted\x22"
    combined = parse_combined(
        f'203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "{escaped}" 200 12 "-" "{agent}"'
    )
    line = (
        '{"time_local":"10/Oct/2026:13:55:36 -0700","remote_addr":"203.0.113.9",'
        f'"request":"{escaped}","status":"200","body_bytes_sent":"12",'
        f'"http_referer":"-","http_user_agent":"{agent}"}}'
    )
    seen = parse_json(line)
    assert combined is not None and seen == combined
    assert (seen.path, seen.user_agent) == (r"/caf\xC3\xA9", agent)
    assert parse_json(line.replace('"status"', '"status" "')) is None  # still not JSON


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("850µs", 0.00085),
        ("850μs", 0.00085),
        ("850us", 0.00085),
        ("1.5ms", 0.0015),
        ("2s", 2.0),
        ("1m2.5s", 62.5),
        ("1h0m0.5s", 3600.5),
        ("120ns", 1.2e-7),
        (".5s", 0.5),
        ("12", None),
        ("1.5 ms", None),
        ("ms", None),
        ("1.5msx", None),
        ("-1s", None),
    ],
)
def test_go_durations_are_read_whole_or_not_at_all(text: str, seconds: float | None) -> None:
    assert go_seconds(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_a_log_of_each_server_imports_the_same_rows(engine: Engine) -> None:
    stored = []
    lines = {
        "combined": [COMBINED],
        "json": [json.dumps(CADDY), json.dumps(TRAEFIK)],
    }
    for log_format, written in lines.items():
        for line in written:
            empty(engine)
            result = import_lines(engine, iter([line.encode()]), log_format, None)
            assert result.imported == 1
            columns = [c for c in web_request_logs.c if c.name not in ("id", "import_key")]
            with engine.connect() as conn:
                row = conn.execute(select(*columns)).one()._asdict()
            stored.append({**row, "response_ms": None, "language": None})
    assert stored[0]["browser"] == "Firefox"
    assert stored[1] == stored[0] and stored[2] == stored[0]


#: Any JSON value, nested a little.
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["200", "0.5", "1.5ms", "2026-10-10T20:55:36Z", "203.0.113.9", "-", ""]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
TOP_NAMES = sorted(
    {*CADDY, *TRAEFIK, "time_iso8601", "time_local", "remote_addr", "request", "uri"}
)
REQUEST_NAMES = sorted({*CADDY["request"], "headers"})


@st.composite
def records(draw: st.DrawFn) -> dict:
    """A record of the names the three shapes read, each holding any JSON value (Caddy's request
    object and its headers included)."""
    record = draw(st.dictionaries(st.sampled_from(TOP_NAMES), VALUES, max_size=10))
    if draw(st.booleans()):
        request = draw(st.dictionaries(st.sampled_from(REQUEST_NAMES), VALUES, max_size=6))
        if draw(st.booleans()):
            names = st.sampled_from(["User-Agent", "Referer", "Accept-Language"])
            request["headers"] = draw(st.dictionaries(names, VALUES, max_size=3))
        record["request"] = request
    return record


def assert_checked(line: str) -> None:
    """A line reads as nothing, or as a request whose every value a row can hold."""
    seen = parse_json(line)
    if seen is None:
        return
    assert MIN_STATUS <= seen.status <= MAX_STATUS
    assert FIRST_TIME <= seen.ts < END_TIME
    assert seen.content_length is None or 0 <= seen.content_length <= MAX_BYTES
    assert seen.response_ms is None or 0 <= seen.response_ms < float("inf")
    for text in (seen.method, seen.path, seen.client_ip, seen.user_agent, seen.referrer):
        assert text is None or (isinstance(text, str) and "\x00" not in text)


@fuzz(300)
@given(record=records())
def test_any_values_under_the_names_read_give_a_request_a_row_can_hold_or_none(
    record: dict,
) -> None:
    assert_checked(json.dumps(record))


@fuzz(300)
@given(data=st.data(), sample=st.sampled_from([CADDY, TRAEFIK]))
def test_mutated_caddy_and_traefik_lines_give_a_request_a_row_can_hold_or_none(
    data: st.DataObject, sample: dict
) -> None:
    line = data.draw(mutated(json.dumps(sample).encode())).decode("utf-8", "replace")
    if data.draw(st.booleans()):  # nginx's escapes (not JSON) of the bytes that break parsers
        escape = "".join(f"\\x{byte:02X}" for byte in data.draw(st.sampled_from(NASTY)))
        line = line.replace("/alerts", escape + "/alerts")
    assert_checked(line)
