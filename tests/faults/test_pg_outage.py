"""PostgreSQL stopped and started under traffic: 503 while it is down, recovery by itself.

The test runs its own throwaway cluster (never the shared one other tests use): gunicorn serves
the station on it, a thread keeps adding poll sources (one audited transaction each) and reading,
and the cluster is stopped with ``pg_ctl stop -m fast`` and started again. While it is down,
``/api/alerts`` answers 503 ``database_unavailable`` with Retry-After, ``/api/broadcast/state``
keeps answering from its last snapshot marked stale, and ``/healthz`` answers 503. Afterwards every
write is whole (each source has its audit row and the reverse), and the ledger verifies.
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import create_engine, select

from alertstation.alerts.poll.sources import AUDIT_TARGET
from alertstation.alerts.poll.tables import poll_sources
from alertstation.audit.ledger import CONFIG_UPDATED, AuditLedger
from alertstation.audit.tables import audit_logs
from alertstation.auth.sessions import COOKIE_NAME
from tests.support import pg_required

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LEDGER_KEY = "pg-outage-test-ledger-key-0123456789abcdef"
PASSWORD = "outage test password 1"
DEADLINE = 60.0  # seconds; generous for a loaded 2-core machine


def _throwaway_helpers() -> Any:
    spec = importlib.util.spec_from_file_location("pg_throwaway", ROOT / "scripts/pg_throwaway.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Cluster:
    """A PostgreSQL cluster of this test's own, which it may stop and start at will."""

    def __init__(self) -> None:
        self._pg = _throwaway_helpers()
        pg_bin = self._pg.find_pg_bin()
        self.workdir = Path(tempfile.mkdtemp(prefix="alertstation-outage-"))
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.workdir, account.pw_uid, account.pw_gid)
        self.data = self.workdir / "data"
        self.port = self._pg.free_port()
        self._pg_ctl = [str(pg_bin / "pg_ctl"), "-D", str(self.data)]
        self._log = self.workdir / "server.log"
        self._run(
            [str(pg_bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust"]
            + ["-E", "UTF8", "--locale=C", "--no-sync"]
        )
        self.running = False
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, command: list[str]) -> None:
        subprocess.run(
            self._pg.as_server_user(command),
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=100"
        )
        self._run([*self._pg_ctl, "-l", str(self._log), "-w", "-t", "90", "-o", options, "start"])
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        self._run([*self._pg_ctl, "-m", mode, "-w", "-t", "90", "stop"])
        self.running = False

    def remove(self) -> None:
        if self.running:
            self.stop("immediate")
        shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


def _call(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        sent = {"Accept": "application/json", **(headers or {})}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            sent["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        raw = response.read()
        parsed = orjson.loads(raw) if raw else None
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, parsed)
    finally:
        conn.close()


def _wait_for(check: Callable[[], bool], what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.25)
    tail = log.read_text()[-4000:] if log is not None and log.exists() else ""
    pytest.fail(f"{what} within {DEADLINE:.0f} s\n{tail}")


@dataclass
class Traffic:
    """Adds poll sources and reads alerts in a thread; remembers every answer."""

    port: int
    auth: dict[str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    answers: list[tuple[str, int, Any]] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            name = f"outage source {n}"
            try:
                added = _call(
                    self.port,
                    "POST",
                    "/admin/poller/sources",
                    {"name": name, "kind": "json-api", "enabled": False},
                    self.auth,
                )
                self.answers.append(("POST", added.status, added.body))
                if added.status == 201:
                    self.created.append(name)
                read = _call(self.port, "GET", "/api/alerts", headers=self.auth)
                self.answers.append(("GET", read.status, read.body))
            except (OSError, http.client.HTTPException) as ex:
                self.errors.append(ex)
            self.stop.wait(0.05)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not os.environ.get("ALERTSTATION_TEST_PG_URL"):
        if pg_required():
            pytest.fail("PostgreSQL is required: run the suite through `make test`")
        pytest.skip("PostgreSQL not available; `make test` starts a throwaway cluster")
    made = Cluster()
    try:
        made.start()
        yield made
    finally:
        made.remove()


def test_the_station_rides_out_a_postgresql_outage(cluster: Cluster, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "ALERTSTATION_LOG_FORMAT": "json",
        "DATABASE_URL": cluster.url,
        "AUDIT_LEDGER_KEY": LEDGER_KEY,
    }
    (tmp_path / "assets").mkdir()
    python = [sys.executable, "-m", "alertstation"]
    subprocess.run([*python, "migrate"], env=env, check=True, capture_output=True, timeout=180)
    subprocess.run(
        [*python, "user", "create", "--username", "admin", "--role", "admin", "--password-stdin"],
        env=env,
        input=PASSWORD.encode(),
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = _throwaway_helpers().free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*python, "serve", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    traffic: Traffic | None = None
    thread: threading.Thread | None = None
    try:
        _wait_for(lambda: _call(port, "GET", "/healthz").status == 200, "gunicorn up", log_path)
        login = _call(port, "POST", "/auth/login", {"username": "admin", "password": PASSWORD})
        assert login.status == 200, login.body
        cookie = login.headers["set-cookie"].split(";", 1)[0]
        assert cookie.startswith(COOKIE_NAME + "=")
        auth = {"Cookie": cookie, "X-CSRF-Token": login.body["csrf_token"]}
        before = _call(port, "GET", "/api/broadcast/state")
        assert before.status == 200 and before.body["stale"] is False

        traffic = Traffic(port, auth)
        thread = threading.Thread(target=traffic.run, daemon=True)
        thread.start()
        _wait_for(lambda: len(traffic.created) >= 3, "writes before the outage", log_path)

        cluster.stop("fast")

        def alerts_unavailable() -> bool:
            answer = _call(port, "GET", "/api/alerts", headers=auth)
            if answer.status != 503:
                return False
            assert answer.body["error"]["code"] == "database_unavailable"
            assert int(answer.headers["retry-after"]) > 0
            return True

        _wait_for(alerts_unavailable, "/api/alerts answering 503", log_path)
        states: list[Answer] = []

        def broadcast_stale() -> bool:
            states.append(_call(port, "GET", "/api/broadcast/state"))
            return states[-1].body.get("stale") is True

        # Within a second of its last check the snapshot is served as fresh; then it is stale.
        _wait_for(broadcast_stale, "/api/broadcast/state marked stale", log_path)
        assert {answer.status for answer in states} == {200}
        state = states[-1]
        # A client behind the (loopback) proxy passes the ban gate and the automatic-ban
        # detectors too, which must not need the database to let it through.
        for n in range(5):
            proxied = _call(
                port,
                "GET",
                "/api/broadcast/state",
                headers={"X-Forwarded-For": f"192.0.2.{10 + n}"},
            )
            assert proxied.status == 200 and proxied.body["stale"] is True, proxied.body
        assert state.body["active"] is False and state.body["active_alerts"] == 0
        assert state.body["timestamp"] == before.body["timestamp"]  # the last snapshot read
        health = _call(port, "GET", "/healthz")
        assert health.status == 503 and health.body["database"] == "unreachable"
        write = _call(
            port,
            "POST",
            "/admin/poller/sources",
            {"name": "written while down", "kind": "json-api", "enabled": False},
            auth,
        )
        assert write.status == 503 and write.body["error"]["code"] == "database_unavailable"
        anonymous = _call(port, "GET", "/api/alerts")
        assert anonymous.status == 503 and "retry-after" in anonymous.headers
        during = len(traffic.answers)
        _wait_for(lambda: len(traffic.answers) >= during + 6, "traffic during the outage")

        cluster.start()

        def recovered() -> bool:
            healthy = _call(port, "GET", "/healthz").status == 200
            alerts = _call(port, "GET", "/api/alerts", headers=auth).status == 200
            fresh = _call(port, "GET", "/api/broadcast/state").body.get("stale") is False
            return healthy and alerts and fresh

        _wait_for(recovered, "recovery after PostgreSQL came back", log_path)
        done = len(traffic.created)
        _wait_for(lambda: len(traffic.created) >= done + 3, "writes after recovery", log_path)
    finally:
        if traffic is not None:
            traffic.stop.set()
        if thread is not None:
            thread.join(timeout=60)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)

    assert traffic is not None
    statuses = {status for _, status, _ in traffic.answers}
    assert 503 in statuses, "the traffic never met the outage"
    assert statuses <= {200, 201, 503}, [a for a in traffic.answers if a[1] >= 500 and a[1] != 503]
    for _, status, body in traffic.answers:
        if status == 503:
            assert body["error"]["code"] == "database_unavailable"

    engine = create_engine(cluster.url)
    try:
        with engine.connect() as conn:
            stored = set(conn.execute(select(poll_sources.c.name)).scalars())
            audited = {
                orjson.loads(details)["name"]
                for details in conn.execute(
                    select(audit_logs.c.details).where(
                        audit_logs.c.action == CONFIG_UPDATED,
                        audit_logs.c.target == AUDIT_TARGET,
                    )
                ).scalars()
            }
            verdict = AuditLedger(LEDGER_KEY).verify(conn)
    finally:
        engine.dispose()
    # Every source the station confirmed is there; none is there without its audit row, and no
    # audit row speaks of a source that is not there: each write was whole or not at all.
    assert set(traffic.created) <= stored
    assert stored == audited
    assert "written while down" not in stored
    assert verdict.ok, verdict.problem
