"""Time the access-log import and dashboard against GoAccess, the dashboard alone, and recording.

``traffic.import_dashboard``: ``alertstation traffic import``'s service (parse, enrich, insert,
and the hourly and daily rollups tallied from the rows as they stream by) of every line (``--all``,
as GoAccess counts them) of a generated 1,000,000-line combined log into a fresh SQLite
database, then the 30-day dashboard over it, against GoAccess (Debian package) parsing the same
file into its JSON report. Before timing, both read a 5,000-line log that also holds what an
internet-facing proxy logs (``accesslog.lines(..., odd=True)``: bad request lines, scanners,
encoded targets, API calls, loopback checks) and must agree on hits, bandwidth and the count of
every status code;
after timing, the same is checked on the big file (each side runs once: the file is imported
once).

``traffic.dashboard``: the 30-day dashboard payload alone over the imported rows, from the
hourly and daily rollups, against the same payload computed from raw rows only (every rollup
deleted inside a transaction that is rolled back).

``traffic.http_recording``: what recording costs a request. A bare Falcon app answering
``GET /login`` with the station's sign-in page, with the station's request recorder installed
as ``create_app`` installs it (``TrafficMiddleware.for_station``: its settings cache, GeoIP
locator and background flusher writing to a real SQLite database, recording on), against the
same app without it. Requests go straight to the WSGI callable (no test client), from a public
address with a browser's User-Agent, Referer and Accept-Language. Each round is 1,000 requests
timed by the requesting thread's CPU time (``time.thread_time``, both sides): the flusher runs
beside them in its own thread as in service (it wakes at 500 waiting rows), and its own CPU
time per row is reported apart (``flusher_cpu_us_per_row`` in the JSON). The two sides' rounds
are timed in one loop, a round of each per pass and the order swapped every pass, so that a
spell of load from elsewhere on a shared machine falls on both sides alike (timed one test
after the other, such a spell once slowed ten of one side's fifteen rounds); each test then
reports its side's rounds (``RoundTimes``). Before each pass the flusher writes what is left
(untimed), so the buffer never overflows. Before timing both answer 200 with the same bytes
and one request becomes one row; after timing every request is a stored row and none was
dropped.

``traffic.http_recording.station``: the whole station (every middleware, the page rendered),
recording on against recording off (two databases), with everything counted: each round is
1,000 requests plus the writes of them (wall time): the flusher's during the round, and at the
round's end a ``flush`` of the rest (not a wait for the flusher's next wake, which would time
its sleep). Both answer the same page; after timing the station with recording on stored one
row per request and the other none.

The log is generated once per session under the pytest temporary directory. With
``--benchmark-disable`` (CI's correctness run) a 5,000-line log is used instead, so the checks
still run in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine, func, select

from alertstation.app import build_station, create_app
from alertstation.auth.service import create_user
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.db.types import utcnow
from alertstation.security.autoban.settings import FLOOD, MAX_THRESHOLD
from alertstation.security.autoban.settings import save_settings as save_autoban
from alertstation.traffic import reports, rollups
from alertstation.traffic.importer import import_file
from alertstation.traffic.period import Filters, parse_period
from alertstation.traffic.recorder import TrafficMiddleware, TrafficRecorder
from alertstation.traffic.settings import save_settings
from alertstation.traffic.tables import (
    web_request_day_groups,
    web_request_days,
    web_request_logs,
    web_request_rollups,
)
from tests.support import make_settings
from tests.traffic import accesslog, reallog
from tests.traffic.reallog import SITE_HOST

FULL_LINES = 1_000_000
CHECK_LINES = 20_000
KEPT_DAYS = 730
WHOLE_DAYS = 402  # the log's 400 days and today, with a day to spare
PASSWORD = "correct horse battery staple"
GOACCESS = shutil.which("goaccess")
VISITOR = "198.51.100.200"


def _label(benchmark: Any, group: str, role: str, peer: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = peer


@pytest.fixture(scope="session")
def end() -> datetime:
    """The hour the generated log ends at (the dashboard's 'now')."""
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


@pytest.fixture(scope="session")
def access_log(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, end: datetime
) -> Path:
    """Generate the log with a real one's shape once per session (``tests.traffic.reallog``:
    1,000,000 lines over 400 days when timing, 20,000 under ``--benchmark-disable``)."""
    disabled = bool(request.config.getoption("benchmark_disable", False))
    lines = CHECK_LINES if disabled else FULL_LINES
    return reallog.write(tmp_path_factory.mktemp("traffic") / f"access-{lines}.log", lines, end)


def fresh_database(folder: Path) -> Engine:
    """Return a migrated, empty SQLite database in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    engine = make_engine(f"sqlite:///{folder / 'traffic.db'}")
    upgrade_to_head(engine)
    return engine


def ours_import_and_dashboard(engine: Engine, log: Path, now: datetime) -> dict[str, Any]:
    """Import every line of the log, as GoAccess counts them (``--all``; it rolls up the complete
    hours and days before ``now`` as the command line's import does), then build the 30-day
    dashboard; return the dashboard."""
    import_file(engine, log, "combined", None, now=now, every_line=True)
    rollups.ensure_rolled_up(engine, now)  # nothing left to roll up: no write
    with engine.connect() as conn:
        return reports.dashboard(conn, parse_period({"days": "31"}, now.date()), Filters())


def goaccess_report(log: Path, out: Path, *options: str) -> dict[str, Any]:
    """Run GoAccess on the log into a JSON report, as an operator would (``options`` added);
    return it."""
    command = [GOACCESS or "goaccess", str(log), "--log-format=COMBINED", "--no-global-config"]
    command += [*options, "-o", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=3600)
    return json.loads(out.read_bytes().decode("utf-8", "replace"))  # %FF-style paths stay raw


def check_agreement(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Hits, bandwidth and every status code's count must match."""
    assert ours["summary"]["hits"] == theirs["general"]["valid_requests"]  # total has failed too
    assert ours["summary"]["bandwidth_bytes"] == theirs["general"]["bandwidth"]
    accesslog.assert_statuses_agree(
        {row["status"]: row["hits"] for row in ours["status_codes"]}, theirs
    )


@pytest.fixture(scope="session")
def agreement(tmp_path_factory: pytest.TempPathFactory, end: datetime) -> None:
    """Before anything is timed: ours and GoAccess agree on a 5,000-line log that also holds
    what an internet-facing proxy logs (``accesslog.lines(..., odd=True)``)."""
    if GOACCESS is None:
        pytest.skip("goaccess is not installed (scripts/install-bench-deps.sh)")
    folder = tmp_path_factory.mktemp("agreement")
    log = accesslog.write(folder / "check.log", 5_000, end, seed=5, odd=True)
    engine = fresh_database(folder / "db")
    try:
        check_agreement(
            ours_import_and_dashboard(engine, log, end),
            goaccess_report(log, folder / "r.json", "--no-query-string"),
        )
    finally:
        engine.dispose()


class OperatorStation:
    """A fresh station on SQLite, as an operator has it: ``alertstation traffic import`` run as
    a process against its database, and the dashboard asked of its web app by a signed-in user
    (the app made and signed in before anything is timed, as a running server is)."""

    def __init__(self, folder: Path) -> None:
        self.engine = fresh_database(folder / "db")
        self.settings = make_settings(folder, str(self.engine.url))
        with begin_write(self.engine) as conn:  # a year and more kept, so the whole log counts
            save_settings(conn, {"retention_days": KEPT_DAYS, "site_hosts": [SITE_HOST]}, utcnow())
            create_user(conn, username="ops", role="operator", password=PASSWORD)
        self.client = falcon.testing.TestClient(create_app(self.settings, engine=self.engine))
        signed_in = self.client.simulate_post(
            "/auth/login", json={"username": "ops", "password": PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.text
        self.cookies = {COOKIE_NAME: signed_in.cookies[COOKIE_NAME].value}

    def import_log(self, log: Path) -> str:
        """Run ``alertstation traffic import --format combined LOG``; return what it printed."""
        environment = {
            **os.environ,
            "ALERTSTATION_DATA_DIR": str(self.settings.data_dir),
            "DATABASE_URL": self.settings.database_url,
            "SECRET_KEY": self.settings.secret_key,
            "AUDIT_LEDGER_KEY": self.settings.audit_ledger_key,
        }
        command = [sys.executable, "-m", "alertstation", "traffic", "import", "--format"]
        done = subprocess.run(
            [*command, "combined", str(log)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def dashboard(self, days: int) -> dict[str, Any]:
        """``GET /api/traffic/dashboard?days=N``; return the payload."""
        answer = self.client.simulate_get(
            "/api/traffic/dashboard", params={"days": str(days)}, cookies=self.cookies
        )
        assert answer.status_code == 200, answer.text
        return answer.json  # type: ignore[no-any-return]

    def import_and_dashboard(self, log: Path) -> dict[str, Any]:
        """What the operator waits for: the import, then the 30-day dashboard."""
        self.import_log(log)
        return self.dashboard(30)


@pytest.fixture(scope="session")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The station the timed import fills, kept for the dashboard timings."""
    station = OperatorStation(tmp_path_factory.mktemp("imported"))
    state: dict[str, Any] = {"engine": station.engine, "station": station}
    yield state
    station.engine.dispose()


def test_import_dashboard_ours(
    benchmark: Any, agreement: None, imported: dict[str, Any], access_log: Path, end: datetime
) -> None:
    _label(benchmark, "traffic.import_dashboard", "ours", "GoAccess")
    station: OperatorStation = imported["station"]
    thirty = benchmark.pedantic(station.import_and_dashboard, args=(access_log,), rounds=1)
    imported["dashboard"] = thirty
    whole = station.dashboard(WHOLE_DAYS)  # every line of the log: compared with GoAccess
    imported["whole"] = whole
    with access_log.open("rb") as lines:
        assert whole["summary"]["hits"] == sum(1 for _ in lines)
    assert 0 < thirty["summary"]["hits"] < whole["summary"]["hits"]
    assert SITE_HOST not in {row["referrer_domain"] for row in whole["referrers"]}


def test_import_dashboard_peer(
    benchmark: Any, agreement: None, imported: dict[str, Any], access_log: Path, tmp_path: Path
) -> None:
    _label(benchmark, "traffic.import_dashboard", "peer", "GoAccess")
    report = benchmark.pedantic(
        goaccess_report, args=(access_log, tmp_path / "report.json"), rounds=1
    )
    check_agreement(imported["whole"], report)


def test_dashboard_400_days_ours(benchmark: Any, imported: dict[str, Any]) -> None:
    """The 400-day dashboard over the whole log, asked of the app as the page asks it."""
    _label(benchmark, "traffic.dashboard_400_days", "ours", "goal: 1 s")
    station: OperatorStation = imported["station"]
    payload = benchmark.pedantic(station.dashboard, args=(400,), rounds=3)
    # The log's first day is the 401st before today's.
    assert 0 < payload["summary"]["hits"] <= imported["whole"]["summary"]["hits"]


def test_dashboard_400_days_goal(benchmark: Any) -> None:
    """The goal the 400-day dashboard is held to, printed beside it: one second."""
    _label(benchmark, "traffic.dashboard_400_days", "peer", "goal: 1 s")
    benchmark.pedantic(time.sleep, args=(1.0,), rounds=1)


def dashboard(engine: Engine, now: datetime) -> dict[str, Any]:
    with engine.connect() as conn:
        return reports.dashboard(conn, parse_period({"days": "30"}, now.date()), Filters())


def dashboard_raw(engine: Engine, now: datetime) -> dict[str, Any]:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            for table in (web_request_rollups, web_request_days, web_request_day_groups):
                conn.execute(table.delete())
            return reports.dashboard(conn, parse_period({"days": "30"}, now.date()), Filters())
        finally:
            transaction.rollback()


def test_dashboard_ours(benchmark: Any, imported: dict[str, Any], end: datetime) -> None:
    _label(benchmark, "traffic.dashboard", "ours", "raw rows, no rollups")
    engine, expected = imported["engine"], imported["dashboard"]
    assert (
        benchmark.pedantic(dashboard, args=(engine, end), rounds=3)["summary"]
        == expected["summary"]
    )


def test_dashboard_peer(benchmark: Any, imported: dict[str, Any], end: datetime) -> None:
    _label(benchmark, "traffic.dashboard", "peer", "raw rows, no rollups")
    engine, expected = imported["engine"], imported["dashboard"]
    result = benchmark.pedantic(dashboard_raw, args=(engine, end), rounds=3)
    assert result["summary"] == expected["summary"]


# --- traffic.http_recording: the recorder on a bare app, and inside the whole station -----------

PAGE_PATH = "/login"
# Each timed round sends this many requests, well under the recorder's buffer (10,000 rows), and
# before each pass of the two sides' rounds the background flusher writes what is left
# (untimed); so no row is dropped while the flusher writes its 500-row batches during a round,
# as it would in service.
ROUND_REQUESTS = 1_000
RECORDING_ROUNDS = 21
STATION_ROUNDS = 5  # the whole station answers a page in about a millisecond
PAGE_HEADERS = {
    "HTTP_USER_AGENT": accesslog.AGENTS[0],
    "HTTP_REFERER": "https://www.google.com/search?q=weather+radio",
    "HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9",
}
DRAIN_SECONDS = 120.0  # generous: CI is a loaded 2-core machine


class WsgiPage:
    """GET one path of a WSGI app as a server would: a fresh environ per request, no test client.

    Calling the app directly keeps the test client's own work (building and validating an
    environ, wrapping the answer) out of both sides' times.
    """

    def __init__(self, app: Any, path: str = PAGE_PATH) -> None:
        self.app = app
        self.environ = falcon.testing.create_environ(path=path, remote_addr=VISITOR, headers=None)
        self.environ.update(PAGE_HEADERS)
        self.status = ""
        self.sent = 0

    def _start(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        self.status = status

    def get(self) -> bytes:
        """One request; return the body."""
        self.sent += 1
        return b"".join(self.app(dict(self.environ), self._start))

    def rounds(self, count: int = ROUND_REQUESTS) -> bytes:
        """``count`` requests; return the last body (each one's status is checked after)."""
        body = b""
        for _ in range(count):
            body = self.get()
            if self.status != "200 OK":
                raise AssertionError(f"{PAGE_PATH} answered {self.status}")
        return body


def bare_page_app(page: bytes, middleware: list[Any]) -> falcon.App:
    """A bare Falcon app answering ``PAGE_PATH`` with ``page``; ``middleware`` as given."""

    class Page:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.content_type = falcon.MEDIA_HTML
            resp.data = page

    app = falcon.App(middleware=middleware)
    app.add_route(PAGE_PATH, Page())
    return app


def drain(recorder: TrafficRecorder) -> None:
    """Wait until the background flusher has taken every queued row (it writes them)."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while recorder.pending() and time.monotonic() < deadline:
        time.sleep(0.005)
    recorder.flush()  # whatever the flusher had not reached, and waits for a write under way


def stored_rows(engine: Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(web_request_logs)).scalar_one()


def recording_database(folder: Path, enabled: bool) -> Engine:
    """A migrated SQLite database with recording on or off and the flood rule at its maximum."""
    engine = fresh_database(folder)
    now = utcnow()
    with begin_write(engine) as conn:
        save_settings(conn, {"enabled": enabled}, now)
        # The flood detector (300 requests in 10 s by default) would ban the timed client.
        save_autoban(conn, {"detectors": {FLOOD: {"threshold": MAX_THRESHOLD}}}, now)
    return engine


@pytest.fixture(scope="module")
def login_page(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The station's sign-in page, as the bytes both bare apps answer."""
    folder = tmp_path_factory.mktemp("page")
    engine = recording_database(folder / "db", enabled=False)
    try:
        app = create_app(make_settings(folder, str(engine.url)), engine=engine)
        return WsgiPage(app).get()
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def recording_apps(
    tmp_path_factory: pytest.TempPathFactory, login_page: bytes
) -> Iterator[dict[str, Any]]:
    """A bare Falcon app with the station's recorder (recording on), and the same app without.

    The recorder middleware is built as ``create_app`` builds it
    (``TrafficMiddleware.for_station`` on a station of a real SQLite database, the system
    clock): its settings cache, its GeoIP locator and its background flusher.
    """
    folder = tmp_path_factory.mktemp("recording")
    engine = recording_database(folder / "db", enabled=True)
    station = build_station(make_settings(folder, str(engine.url)), engine)
    traffic = TrafficMiddleware.for_station(station)
    recording = WsgiPage(bare_page_app(login_page, [traffic]))
    bare = WsgiPage(bare_page_app(login_page, []))
    for side in (recording, bare):  # same status and bytes before anything is timed
        assert side.get() == login_page and side.status == "200 OK"
    drain(traffic.recorder)
    assert stored_rows(engine) == 1 and traffic.recorder.dropped == 0  # recording is on
    yield {"recording": recording, "bare": bare, "recorder": traffic.recorder, "engine": engine}
    engine.dispose()


def check_recorded(page: WsgiPage, recorder: TrafficRecorder, engine: Engine) -> None:
    """After timing: every request is a stored row, none dropped."""
    drain(recorder)
    assert recorder.dropped == 0, f"{recorder.dropped} rows dropped"
    assert stored_rows(engine) == page.sent, (stored_rows(engine), page.sent)


def flusher_cpu(recorder: TrafficRecorder) -> float:
    """Return the CPU seconds the recorder's flusher thread has used so far."""
    thread = recorder._thread
    if thread is None or thread.ident is None or not thread.is_alive():
        return 0.0
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


class RoundTimes:
    """A pytest-benchmark timer that reads back rounds timed earlier, one round per call pair.

    ``benchmark.pedantic`` reads its timer once before and once after each round; this one
    answers the running sum of ``seconds``, so the n-th round lasts ``seconds[n]``.
    """

    def __init__(self, seconds: list[float]) -> None:
        self._seconds = iter(seconds)
        self._now = 0.0
        self._started = False

    def __call__(self) -> float:
        if self._started:
            seconds = next(self._seconds, None)
            if seconds is None:
                raise RuntimeError("more rounds asked for than were timed")
            self._now += seconds
        self._started = not self._started
        return self._now


@pytest.fixture(scope="module")
def recording_rounds(recording_apps: dict[str, Any]) -> dict[str, Any]:
    """Time both sides' rounds in one loop: each pass, after the flusher has written what was
    left (untimed), a round of each side by the requesting thread's CPU time, the order swapped
    every pass. Returns each side's round times and last answer, and the flusher's CPU
    microseconds per row over the loop."""
    sides = {"ours": recording_apps["recording"], "peer": recording_apps["bare"]}
    recorder: TrafficRecorder = recording_apps["recorder"]
    times: dict[str, list[float]] = {"ours": [], "peer": []}
    bodies: dict[str, bytes] = {}
    for side in sides.values():  # warm-up
        side.rounds()
    drain(recorder)
    sent, cpu = sides["ours"].sent, flusher_cpu(recorder)
    for turn in range(RECORDING_ROUNDS):
        drain(recorder)
        for name in ("ours", "peer") if turn % 2 == 0 else ("peer", "ours"):
            start = time.thread_time()
            bodies[name] = sides[name].rounds()
            times[name].append(time.thread_time() - start)
    drain(recorder)
    per_row = (flusher_cpu(recorder) - cpu) / (sides["ours"].sent - sent) * 1e6
    return {"times": times, "bodies": bodies, "flusher_cpu_us_per_row": round(per_row, 1)}


def report_rounds(benchmark: Any, rounds: dict[str, Any], side: str) -> bytes:
    """Report ``side``'s rounds from ``recording_rounds`` as this benchmark's; return its answer."""
    benchmark._timer = RoundTimes(rounds["times"][side])
    benchmark.extra_info["timer"] = (
        "time.thread_time (the requesting thread's CPU), both sides' rounds in one loop"
    )
    benchmark.extra_info["requests_per_round"] = ROUND_REQUESTS
    body = rounds["bodies"][side]
    result: bytes = benchmark.pedantic(lambda: body, rounds=RECORDING_ROUNDS)
    return result


def test_http_recording_ours(
    benchmark: Any,
    recording_apps: dict[str, Any],
    recording_rounds: dict[str, Any],
    login_page: bytes,
) -> None:
    _label(benchmark, "traffic.http_recording", "ours", "bare Falcon")
    assert report_rounds(benchmark, recording_rounds, "ours") == login_page
    benchmark.extra_info["flusher_cpu_us_per_row"] = recording_rounds["flusher_cpu_us_per_row"]
    page, recorder = recording_apps["recording"], recording_apps["recorder"]
    check_recorded(page, recorder, recording_apps["engine"])


def test_http_recording_peer(
    benchmark: Any, recording_rounds: dict[str, Any], login_page: bytes
) -> None:
    _label(benchmark, "traffic.http_recording", "peer", "bare Falcon")
    assert report_rounds(benchmark, recording_rounds, "peer") == login_page


@pytest.fixture(scope="module")
def stations(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The whole station twice: recording on, and recording off (each its own database)."""
    apps: dict[str, Any] = {}
    engines = []
    for name, enabled in (("on", True), ("off", False)):
        folder = tmp_path_factory.mktemp(f"station-{name}")
        engine = recording_database(folder / "db", enabled)
        engines.append(engine)
        app = create_app(make_settings(folder, str(engine.url)), engine=engine)
        apps[name] = {"page": WsgiPage(app), "app": app, "engine": engine}
    on, off = apps["on"], apps["off"]
    assert on["page"].get() == off["page"].get()  # the same page before anything is timed
    assert on["page"].status == off["page"].status == "200 OK"
    drain(on["app"].traffic)
    assert stored_rows(on["engine"]) == 1 and stored_rows(off["engine"]) == 0
    yield apps
    for engine in engines:
        engine.dispose()


def rounds_and_writes(page: WsgiPage, recorder: TrafficRecorder) -> bytes:
    """A round of requests, then the recorder's writes of it: recording's whole cost counted.

    The rows the background flusher has not taken when the round ends are written here at once
    (``flush`` first waits for a write under way), not left for its next wake: waiting for that
    (up to its 1 s interval) would time an idle wait, not recording's work.
    """
    body = page.rounds()
    recorder.flush()
    return body


def test_http_recording_station_ours(benchmark: Any, stations: dict[str, Any]) -> None:
    _label(benchmark, "traffic.http_recording.station", "ours", "the station, recording off")
    on = stations["on"]
    body = benchmark.pedantic(
        rounds_and_writes, args=(on["page"], on["app"].traffic), rounds=STATION_ROUNDS
    )
    assert body == stations["off"]["page"].get()
    check_recorded(on["page"], on["app"].traffic, on["engine"])


def test_http_recording_station_peer(benchmark: Any, stations: dict[str, Any]) -> None:
    _label(benchmark, "traffic.http_recording.station", "peer", "the station, recording off")
    off = stations["off"]
    body = benchmark.pedantic(
        rounds_and_writes, args=(off["page"], off["app"].traffic), rounds=STATION_ROUNDS
    )
    assert body == stations["on"]["page"].get()
    off["app"].traffic.flush()
    assert stored_rows(off["engine"]) == 0  # recording off: nothing was written
