"""The request recorder: what it captures, what the settings leave out, and that it never fails."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import Engine, event, func, select

from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.settings import parse_networks
from alertstation.traffic import counters
from alertstation.traffic import recorder as recorder_module
from alertstation.traffic.recorder import TrafficRecorder, dropped_rows, should_record
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettings, TrafficSettingsCache, settings_cache_for
from alertstation.traffic.tables import web_request_logs
from tests.support import Clock, SignedIn, clear_tables, make_settings
from tests.support import StationHarness as Station

pytestmark = pytest.mark.usefixtures("clean_log")

Rows = Callable[[], list[dict[str, Any]]]
CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def configure(admin: SignedIn, **changes: Any) -> None:
    result = admin.request("PUT", "/api/traffic/settings", json=changes)
    assert result.status_code == 200, result.text


def test_a_request_is_recorded_with_what_was_seen(station: Station, logged: Rows) -> None:
    result = station.client.simulate_get(
        "/healthz",
        remote_addr="203.0.113.7",
        headers={
            "User-Agent": CHROME,
            "Referer": "https://www.google.com/search?q=weather+radio",
            "Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5",
        },
    )
    assert result.status_code == 200
    [row] = logged()
    assert (row["method"], row["path"], row["status"]) == ("GET", "/healthz", 200)
    assert row["client_ip"] == "203.0.113.7" and row["visitor_key"] == "203.0.113.7"
    assert row["content_length"] == len(result.content)
    assert row["response_ms"] is not None and row["response_ms"] >= 0
    assert row["ts"] == pytest.approx(station.clock().timestamp())
    assert row["hour"] == int(station.clock().timestamp() // 3600)
    assert row["authenticated"] is False and row["source"] == "live"
    assert (row["browser"], row["browser_version"], row["os"]) == ("Chrome", "120", "Windows")
    assert row["device_type"] == "desktop" and row["is_bot"] is False
    assert row["language"] == "fr-CA"
    assert row["referrer_domain"] == "google.com"
    assert (row["search_engine"], row["search_phrase"]) == ("Google", "weather radio")
    assert row["page_view"] is True  # a GET answered 200, neither /api/ nor a static file


def test_loopback_is_left_out_by_default_and_recorded_when_allowed(
    station: Station, admin: SignedIn, logged: Rows
) -> None:
    station.client.simulate_get("/healthz")  # 127.0.0.1
    station.client.simulate_get("/healthz", remote_addr="::1")
    assert logged() == []
    configure(admin, exclude_internal=False)
    station.client.simulate_get("/healthz")
    assert [row["client_ip"] for row in logged()] == ["127.0.0.1"]


def test_skip_paths_api_toggle_bots_and_authenticated_only(
    station: Station, admin: SignedIn, logged: Rows
) -> None:
    outside = "198.51.100.20"
    configure(admin, skip_paths=["/healthz"])
    station.client.simulate_get("/healthz", remote_addr=outside)
    station.client.simulate_get("/api/system_status", remote_addr=outside)  # API: off by default
    assert logged() == []
    configure(admin, skip_paths=[], log_api_requests=True)
    station.client.simulate_get("/api/system_status", remote_addr=outside)
    assert [row["path"] for row in logged()] == ["/api/system_status"]
    configure(admin, exclude_bots=True)
    station.client.simulate_get("/healthz", remote_addr=outside, headers={"User-Agent": GOOGLEBOT})
    station.client.simulate_get("/healthz", remote_addr=outside, headers={"User-Agent": CHROME})
    assert [row["browser"] for row in logged()[1:]] == ["Chrome"]
    configure(admin, authenticated_only=True, exclude_internal=False)
    before = len(logged())
    station.client.simulate_get("/healthz", remote_addr=outside)
    admin.request("GET", "/healthz")
    rows = logged()[before:]
    assert [row["authenticated"] for row in rows] == [True]


def test_anonymize_ip_masks_at_capture_and_no_raw_address_is_stored(
    station: Station, admin: SignedIn, logged: Rows
) -> None:
    configure(admin, anonymize_ip=True)
    station.client.simulate_get("/healthz", remote_addr="203.0.113.77")
    station.client.simulate_get("/healthz", remote_addr="2001:db8:abcd:12:34::9")
    rows = logged()
    assert [row["client_ip"] for row in rows] == ["203.0.113.0", "2001:db8:abcd::"]
    assert [row["visitor_key"] for row in rows] == ["203.0.113.0", "2001:db8:abcd::/64"]
    stored = " ".join(str(value) for row in rows for value in row.values())
    assert "203.0.113.77" not in stored and ":34::9" not in stored


def test_ipv6_visitors_are_grouped_by_their_64(station: Station, logged: Rows) -> None:
    station.client.simulate_get("/healthz", remote_addr="2001:db8:1:2::10")
    station.client.simulate_get("/healthz", remote_addr="2001:db8:1:2:ffff::1")
    station.client.simulate_get("/healthz", remote_addr="2001:db8:1:3::10")
    rows = logged()
    assert [row["ip_version"] for row in rows] == [6, 6, 6]
    assert [row["visitor_key"] for row in rows] == [
        "2001:db8:1:2::/64",
        "2001:db8:1:2::/64",
        "2001:db8:1:3::/64",
    ]


def test_client_address_follows_the_one_hop_rule(tmp_path: Any, engine: Engine) -> None:
    settings = make_settings(
        tmp_path,
        engine.url.render_as_string(hide_password=False),
        trusted_proxies=parse_networks("10.0.0.1"),
    )
    app = create_app(settings, engine=engine, clock=Clock())
    client = falcon.testing.TestClient(app)
    try:
        forwarded = {"X-Forwarded-For": "192.0.2.99, 198.51.100.5"}
        client.simulate_get("/healthz", remote_addr="10.0.0.1", headers=forwarded)
        client.simulate_get("/healthz", remote_addr="192.0.2.50", headers=forwarded)
        app.traffic.flush()
        with engine.connect() as conn:
            ips = conn.execute(select(web_request_logs.c.client_ip).order_by("id")).scalars()
            assert list(ips) == ["198.51.100.5", "192.0.2.50"]
    finally:
        clear_tables(engine)


def test_a_batch_is_one_multi_row_insert(station: Station, engine: Engine, logged: Rows) -> None:
    statements: list[tuple[str, bool]] = []

    def seen(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        if "web_request_logs" in statement and statement.lstrip().upper().startswith("INSERT"):
            statements.append((statement, many))

    for index in range(7):
        station.client.simulate_get("/healthz", remote_addr=f"198.51.100.{index + 1}")
    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert len(logged()) == 7
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(statements) == 1
    statement, _ = statements[0]
    # One INSERT ... VALUES (...), (...), ... for the batch (SQLAlchemy's insertmanyvalues
    # reports it through the executemany path, but sends one statement).
    assert statement.upper().count("VALUES") == 1 and statement.count("),") >= 6


def sample(index: int) -> Observed:
    return Observed(
        ts=1_800_000_000.0 + index,
        method="GET",
        path=f"/p{index}",
        status=200,
        response_ms=1.0,
        content_length=10,
        client_ip="192.0.2.1",
        user_agent=None,
        referrer=None,
        accept_language=None,
        authenticated=False,
    )


def test_overflow_drops_rows_and_counts_them(engine: Engine) -> None:
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine), capacity=3)
    with engine.connect() as conn:
        before = dropped_rows(conn)
    for index in range(5):
        recorder.capture(sample(index))
    assert recorder.pending() == 3 and recorder.dropped == 2
    assert dropped_rows(None) >= 2
    try:
        assert recorder.flush() == 3
        with engine.connect() as conn:
            assert dropped_rows(conn) == before + 2, "kept in the database with the next write"
    finally:
        clear_tables(engine)


def test_a_failed_write_is_counted_and_the_flusher_carries_on(tmp_path: Any) -> None:
    bare = make_engine(f"sqlite:///{tmp_path / 'no-tables.db'}")  # no web_request_logs table
    recorder = TrafficRecorder(bare, TrafficSettingsCache(bare))
    recorder.capture(sample(1))
    recorder.capture(sample(2))
    assert recorder.flush() == 0
    assert recorder.dropped == 2 and recorder.pending() == 0
    bare.dispose()


def test_a_broken_recorder_never_fails_the_request(
    station: Station, caplog: pytest.LogCaptureFixture
) -> None:
    # Rules that are no rules: the middleware fails inside, logs it, and the request goes on.
    cache = station.app.traffic.settings
    cache._set_state((float("inf"), TrafficSettings(), 42))  # handed to the middleware's tap
    try:
        with caplog.at_level("ERROR", logger="alertstation.traffic"):
            result = station.client.simulate_get("/healthz", remote_addr="203.0.113.9")
    finally:
        cache.clear()
    assert result.status_code == 200
    assert "request not recorded (TypeError)" in caplog.text
    assert station.app.traffic.pending() == 0


def test_the_background_flusher_writes_without_being_asked(
    station: Station, engine: Engine
) -> None:
    station.client.simulate_get("/healthz", remote_addr="203.0.113.8")
    deadline = time.monotonic() + 60
    count = 0
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            count = conn.execute(select(func.count()).select_from(web_request_logs)).scalar_one()
        if count:
            break
        time.sleep(0.1)
    assert count == 1


def test_settings_cache_is_shared_by_the_recorder_and_the_routes(station: Station) -> None:
    assert station.app.traffic.settings is settings_cache_for(station.engine)


def test_a_queued_tuple_is_written_as_its_observed_would_be(engine: Engine) -> None:
    # The middleware queues the fields of Observed as a plain tuple; the flusher builds the
    # Observed, so the row equals the one an Observed with the same fields gives.
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    seen = Observed(
        1_800_000_000.5, "POST", "/p", 201, 2.5, 42, "203.0.113.4", CHROME, None, "de", True, "x"
    )
    recorder.capture(seen)
    recorder.capture(tuple(getattr(seen, name) for name in Observed.__slots__[:12]))
    assert recorder.flush() == 2
    with engine.connect() as conn:
        rows = [dict(row._mapping) for row in conn.execute(select(web_request_logs))]
    for row in rows:
        del row["id"]
    assert len(rows) == 2 and rows[0] == rows[1]
    assert (rows[0]["method"], rows[0]["status"], rows[0]["browser"]) == ("POST", 201, "Chrome")


def test_a_nul_in_a_request_neither_loses_the_batch_nor_is_stored(engine: Engine) -> None:
    # A decoded %00 reaches the path, and a header may carry one. PostgreSQL refuses NUL in
    # text, and the whole batch (every other request in it) was dropped with it. Text is now
    # cut at its first NUL on both backends, as GoAccess reads it.
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    clean = Observed(
        1_800_000_000.0, "GET", "/ok", 200, 1.0, 10, "203.0.113.4", CHROME, None, None, False, "x"
    )
    odd = replace(
        clean,
        path="/index.php\x00.jpg",
        user_agent="bad\x00agent",
        referrer="https://www.google.com/search?q=radio%00x",
        accept_language="fr\x00",
    )
    recorder.capture(clean)
    recorder.capture(odd)
    assert recorder.flush() == 2
    columns = web_request_logs.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                columns.path, columns.user_agent, columns.search_phrase, columns.language
            ).order_by(columns.id)
        ).all()
    assert [tuple(row) for row in rows] == [
        ("/ok", CHROME, None, None),
        ("/index.php", "bad", "radio", "fr"),
    ]


def test_skip_paths_given_as_a_list_still_apply() -> None:
    settings = TrafficSettings(skip_paths=["/health", "/metrics"])  # type: ignore[arg-type]
    assert not should_record(settings, "/healthz", "203.0.113.4", False)
    assert should_record(settings, "/alerts", "203.0.113.4", False)
    assert not should_record(settings, "/alerts", "127.0.0.1", False)  # internal, by default
    assert should_record(replace(settings, exclude_internal=False), "/alerts", "::1", False)


def test_a_referrer_from_the_station_itself_is_no_referrer_domain(
    station: Station, logged: Rows
) -> None:
    # The middleware queues the Host header as sent; the flusher takes its port off.
    for host, referrer in (
        ("station.example:8443", "https://station.example:8443/alerts"),
        ("station.example", "https://www.example.net/page"),
    ):
        station.client.simulate_get(
            "/healthz", remote_addr="203.0.113.7", headers={"Host": host, "Referer": referrer}
        )
    own, outside = logged()
    assert own["referrer_domain"] is None
    assert outside["referrer_domain"] == "example.net"


def test_a_forked_child_starts_its_own_flusher(engine: Engine) -> None:
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    recorder.capture(sample(1))
    first = recorder._thread
    assert first is not None and recorder._running
    recorder_module._forked()  # what os.register_at_fork runs in a child
    recorder._thread_pid = 0  # as seen from the child's process id
    recorder.capture(sample(2))
    assert recorder._running and recorder._thread is not first and recorder._thread.is_alive()
    assert recorder.flush() + recorder.written >= 2


class CountingLocator:
    def __init__(self) -> None:
        self.calls = 0

    def locate(self, address: str) -> dict[str, Any] | None:
        self.calls += 1
        return {"country": "Canada", "flag": "CA", "city": address}

    def asn(self, address: str) -> dict[str, Any] | None:
        self.calls += 1
        return {"asn": 64500, "org": "Example"}


def test_each_address_is_located_once_per_batch(engine: Engine) -> None:
    locator = CountingLocator()
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine), lambda: locator)
    for index in range(4):
        recorder.capture(replace(sample(index), client_ip=f"192.0.2.{index % 2}"))
    assert recorder.flush() == 4
    assert locator.calls == 4  # two addresses, each located and its network looked up once
    with engine.connect() as conn:
        rows = conn.execute(select(web_request_logs.c.client_ip, web_request_logs.c.city)).all()
    assert sorted(rows) == sorted((f"192.0.2.{i % 2}", f"192.0.2.{i % 2}") for i in range(4))


class _Networks:
    """A locator whose AS numbers are given per address."""

    def __init__(self, numbers: dict[str, int]) -> None:
        self.numbers = numbers

    def locate(self, address: str) -> dict[str, Any] | None:
        return None

    def asn(self, address: str) -> dict[str, Any] | None:
        return {"asn": self.numbers[address], "org": "Example"}


def test_a_bad_row_is_dropped_alone_and_as_numbers_over_2_31_are_stored(
    engine: Engine,
) -> None:
    numbers = {"192.0.2.1": 4_294_967_295, "192.0.2.2": 2**64}  # the second fits no column
    recorder = TrafficRecorder(
        engine, TrafficSettingsCache(engine), lambda: _Networks(numbers), batch=10
    )
    for index in range(5):
        recorder.capture(replace(sample(index), client_ip=f"192.0.2.{1 + (index == 2)}"))
    try:
        assert recorder.flush() == 4
        assert recorder.dropped == 1
        with engine.connect() as conn:
            stored = conn.execute(select(web_request_logs.c.path, web_request_logs.c.asn))
            assert sorted(stored) == [(f"/p{n}", 4_294_967_295) for n in (0, 1, 3, 4)]
            assert counters.read(conn, counters.ROWS_DROPPED) == 1
        assert recorder.unsaved_drops() == 0
    finally:
        clear_tables(engine)


class _FakeTime:
    """A monotonic clock whose sleep advances it, calling ``on_sleep`` with each pause."""

    def __init__(self, on_sleep: Callable[[float], None] = lambda pause: None) -> None:
        self.now = 0.0
        self.pauses: list[float] = []
        self.on_sleep = on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, pause: float) -> None:
        self.pauses.append(pause)
        self.now += pause
        self.on_sleep(pause)


def test_a_batch_meeting_a_lock_is_retried_then_dropped_and_the_drops_are_kept(
    tmp_path: Any,
) -> None:
    from alertstation.db.metadata import metadata

    path = tmp_path / "locked.db"
    quick = make_engine(f"sqlite:///{path}", connect_args={"timeout": 0.01})

    @event.listens_for(quick, "connect")
    def _no_busy_wait(dbapi_conn: Any, _record: Any) -> None:
        # After the engine's own listener, which sets the station's busy timeout: each attempt
        # meets the lock at once, and the injected clock alone says how long it was tried.
        dbapi_conn.execute("PRAGMA busy_timeout=10")

    metadata.create_all(quick)
    held = sqlite3.connect(path, isolation_level=None)
    held.execute("BEGIN IMMEDIATE")  # another writer holds the write lock

    def release_after_three(_pause: float) -> None:
        if len(fake.pauses) == 3:
            held.execute("ROLLBACK")

    fake = _FakeTime(release_after_three)
    recorder = TrafficRecorder(
        quick, TrafficSettingsCache(quick), monotonic=fake.monotonic, sleep=fake.sleep
    )
    try:
        recorder.capture(sample(1))
        assert recorder.flush() == 1 and recorder.dropped == 0
        assert fake.pauses == [0.05, 0.1, 0.2], "paused, doubling, until the lock went"

        held.execute("BEGIN IMMEDIATE")
        fake.on_sleep = lambda pause: None
        fake.pauses.clear()
        recorder.capture(sample(2))
        recorder.capture(sample(3))
        assert recorder.flush() == 0 and recorder.dropped == 2
        retry = recorder_module.LOCK_RETRY_SECONDS
        assert retry - recorder_module.LOCK_PAUSE_MAX < fake.now <= retry, "tried for 30 s"
        held.execute("ROLLBACK")
        recorder.capture(sample(4))
        assert recorder.flush() == 1  # ... and the drops go to the database with it
        assert recorder.unsaved_drops() == 0
        with quick.connect() as conn:
            assert counters.read(conn, counters.ROWS_DROPPED) == 2
    finally:
        held.close()
        quick.dispose()


def test_system_status_shows_the_drops_of_every_process(station: Station, engine: Engine) -> None:
    before = station.client.simulate_get("/api/system_status").json["traffic_rows_dropped"]
    with begin_write(engine) as conn:
        counters.add(conn, counters.ROWS_DROPPED, 7)  # what other processes dropped
    after = station.client.simulate_get("/api/system_status").json["traffic_rows_dropped"]
    assert after == before + 7
