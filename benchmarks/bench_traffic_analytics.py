"""Time the access-log import and dashboard against GoAccess, the dashboard alone, and recording.

``traffic.import_dashboard``: ``alertstation traffic import``'s service (parse, enrich, insert)
of a generated 1,000,000-line combined log into a fresh SQLite database, then the 30-day
dashboard over it (rolling the hours up first), against GoAccess (Debian package) parsing the
same file into its JSON report. Before timing, both read a 5,000-line log and must agree on
hits, bandwidth and the count of every status code; after timing, the same is checked on the
big file (each side runs once: the file is imported once).

``traffic.dashboard``: the 30-day dashboard payload alone over the imported rows, from the
hourly and daily rollups, against the same payload computed from raw rows only (every rollup
deleted inside a transaction that is rolled back).

``traffic.http_recording``: ``GET /login`` (a public page that needs no database) from a public
address through the whole station app with request recording on, against a bare Falcon app
answering the same bytes (the flood detector's threshold raised to its maximum so the timed
client is never banned). After timing, the recorded rows are flushed and none was dropped.

The log is generated once per session under the pytest temporary directory. With
``--benchmark-disable`` (CI's correctness run) a 5,000-line log is used instead, so the checks
still run in seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from alertstation.security.autoban.settings import FLOOD, MAX_THRESHOLD
from alertstation.security.autoban.settings import save_settings as save_autoban
from alertstation.traffic import reports, rollups
from alertstation.traffic.importer import import_file
from alertstation.traffic.period import Filters, parse_period
from alertstation.traffic.settings import save_settings
from alertstation.traffic.tables import (
    web_request_day_groups,
    web_request_days,
    web_request_rollups,
)
from tests.support import Clock, make_settings
from tests.traffic import accesslog

FULL_LINES = 1_000_000
CHECK_LINES = 5_000
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
    """Generate the combined log once per session (1,000,000 lines when timing)."""
    disabled = bool(request.config.getoption("benchmark_disable", False))
    lines = CHECK_LINES if disabled else FULL_LINES
    return accesslog.write(tmp_path_factory.mktemp("traffic") / f"access-{lines}.log", lines, end)


def fresh_database(folder: Path) -> Engine:
    """Return a migrated, empty SQLite database in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    engine = make_engine(f"sqlite:///{folder / 'traffic.db'}")
    upgrade_to_head(engine)
    return engine


def ours_import_and_dashboard(engine: Engine, log: Path, now: datetime) -> dict[str, Any]:
    """Import the log, then build the 30-day dashboard; return the dashboard."""
    import_file(engine, log, "combined", None)
    rollups.ensure_rolled_up(engine, now)
    with engine.connect() as conn:
        return reports.dashboard(conn, parse_period({"days": "31"}, now.date()), Filters())


def goaccess_report(log: Path, out: Path) -> dict[str, Any]:
    """Run GoAccess on the log into a JSON report; return it."""
    command = [GOACCESS or "goaccess", str(log), "--log-format=COMBINED", "--no-query-string"]
    command += ["--no-progress", "-o", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=3600)
    return json.loads(out.read_text())


def statuses(report: dict[str, Any]) -> dict[int, int]:
    return {
        int(item["data"][:3]): item["hits"]["count"]
        for family in report["status_codes"]["data"]
        for item in family["items"]
    }


def check_agreement(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Hits, bandwidth and every status code's count must match."""
    assert ours["summary"]["hits"] == theirs["general"]["total_requests"]
    assert ours["summary"]["bandwidth_bytes"] == theirs["general"]["bandwidth"]
    assert {row["status"]: row["hits"] for row in ours["status_codes"]} == statuses(theirs)


@pytest.fixture(scope="session")
def agreement(tmp_path_factory: pytest.TempPathFactory, end: datetime) -> None:
    """Before anything is timed: ours and GoAccess agree on a 5,000-line log."""
    if GOACCESS is None:
        pytest.skip("goaccess is not installed (scripts/install-bench-deps.sh)")
    folder = tmp_path_factory.mktemp("agreement")
    log = accesslog.write(folder / "check.log", CHECK_LINES, end, seed=5)
    engine = fresh_database(folder / "db")
    try:
        check_agreement(
            ours_import_and_dashboard(engine, log, end), goaccess_report(log, folder / "r.json")
        )
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The database the timed import fills, kept for the dashboard timings."""
    engine = fresh_database(tmp_path_factory.mktemp("imported"))
    state: dict[str, Any] = {"engine": engine}
    yield state
    engine.dispose()


def test_import_dashboard_ours(
    benchmark: Any, agreement: None, imported: dict[str, Any], access_log: Path, end: datetime
) -> None:
    _label(benchmark, "traffic.import_dashboard", "ours", "GoAccess")
    result = benchmark.pedantic(
        ours_import_and_dashboard, args=(imported["engine"], access_log, end), rounds=1
    )
    imported["dashboard"] = result
    with access_log.open("rb") as lines:
        assert result["summary"]["hits"] == sum(1 for _ in lines)


def test_import_dashboard_peer(
    benchmark: Any, agreement: None, imported: dict[str, Any], access_log: Path, tmp_path: Path
) -> None:
    _label(benchmark, "traffic.import_dashboard", "peer", "GoAccess")
    report = benchmark.pedantic(
        goaccess_report, args=(access_log, tmp_path / "report.json"), rounds=1
    )
    check_agreement(imported["dashboard"], report)


def dashboard(engine: Engine, now: datetime) -> dict[str, Any]:
    with engine.connect() as conn:
        return reports.dashboard(conn, parse_period({"days": "31"}, now.date()), Filters())


def dashboard_raw(engine: Engine, now: datetime) -> dict[str, Any]:
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            for table in (web_request_rollups, web_request_days, web_request_day_groups):
                conn.execute(table.delete())
            return reports.dashboard(conn, parse_period({"days": "31"}, now.date()), Filters())
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


@pytest.fixture(scope="module")
def http_clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The station app recording every request, and a bare Falcon app with the same page."""
    folder = tmp_path_factory.mktemp("http")
    engine = fresh_database(folder / "db")
    clock = Clock()
    with begin_write(engine) as conn:
        save_settings(conn, {"enabled": True}, clock())
        # The flood detector (300 requests in 10 s by default) would ban the timed client.
        save_autoban(conn, {"detectors": {FLOOD: {"threshold": MAX_THRESHOLD}}}, clock())
    app = create_app(make_settings(folder, str(engine.url)), engine=engine, clock=clock)
    station = falcon.testing.TestClient(app)
    page = station.simulate_get("/login", remote_addr=VISITOR)
    assert page.status_code == 200

    class Login:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            resp.content_type = falcon.MEDIA_HTML
            resp.data = page.content

    bare_app = falcon.App()
    bare_app.add_route("/login", Login())
    bare = falcon.testing.TestClient(bare_app)
    assert bare.simulate_get("/login").content == page.content
    yield {"station": station, "bare": bare, "app": app, "page": page.content}
    engine.dispose()


def test_http_recording_ours(benchmark: Any, http_clients: dict[str, Any]) -> None:
    _label(benchmark, "traffic.http_recording", "ours", "bare Falcon")
    station, app = http_clients["station"], http_clients["app"]
    before = app.traffic.written + app.traffic.pending()
    result = benchmark(station.simulate_get, "/login", remote_addr=VISITOR)
    assert result.content == http_clients["page"]
    app.traffic.flush()
    assert app.traffic.written > before and app.traffic.dropped == 0


def test_http_recording_peer(benchmark: Any, http_clients: dict[str, Any]) -> None:
    _label(benchmark, "traffic.http_recording", "peer", "bare Falcon")
    result = benchmark(http_clients["bare"].simulate_get, "/login", remote_addr=VISITOR)
    assert result.content == http_clients["page"]
