"""`alertstation run` supervises its worker: restarts it, and takes it down when killed itself."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from alertstation.worker.leader import FileLeaderLock

DEADLINE = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children(pid: int) -> dict[int, str]:
    """Return the live children of ``pid`` with their command lines (from /proc)."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found[int(entry.name)] = cmdline
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def wait_for(predicate, what: str, log: Path, deadline: float = DEADLINE):  # noqa: ANN001, ANN201
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} within {deadline:.0f} s\n{log.read_text()}")


def worker_pid(run_pid: int) -> int | None:
    pids = [pid for pid, cmd in children(run_pid).items() if cmd.endswith(" worker ")]
    return pids[0] if len(pids) == 1 else None


def system_status(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/system_status", timeout=5) as r:
            return orjson.loads(r.read())
    except (ConnectionError, urllib.error.URLError, TimeoutError):
        return None


@contextmanager
def station_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """Start `alertstation run` on a free loopback port with a fresh SQLite data dir."""
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "ALERTSTATION_LOG_FORMAT": "json",
    }
    env.pop("DATABASE_URL", None)
    python = [sys.executable, "-m", "alertstation"]
    (tmp_path / "assets").mkdir(exist_ok=True)
    subprocess.run([*python, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    port = _free_port()
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        run = subprocess.Popen(
            [*python, "run", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield run, port, log_path
    finally:
        try:
            os.killpg(run.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        run.wait(timeout=60)


@pytest.mark.slow
def test_a_killed_worker_is_logged_and_restarted(tmp_path: Path) -> None:
    with station_run(tmp_path) as (run, port, log):
        first = wait_for(lambda: worker_pid(run.pid), "the worker started", log)
        wait_for(lambda: "worker is the leader" in log.read_text(), "the worker led", log)
        status = wait_for(lambda: system_status(port), "the web answered", log)
        assert status["worker_supervisor"]["state"] == "running"
        assert status["worker_supervisor"]["restarts"] == 0
        os.kill(first, signal.SIGKILL)
        second = wait_for(
            lambda: (pid := worker_pid(run.pid)) not in (None, first) and pid,
            "a new worker started",
            log,
        )
        assert second != first
        text = log.read_text()
        assert f"the worker (pid {first}) exited unexpectedly (killed by SIGKILL)" in text
        assert "the worker was restarted as pid" in text
        status = wait_for(
            lambda: (s := system_status(port)) and s["worker_supervisor"]["restarts"] == 1 and s,
            "the status showed the restart",
            log,
        )
        assert status["worker_supervisor"]["last_exit"] == "killed by SIGKILL"
        assert run.poll() is None  # the station itself kept running


@pytest.mark.slow
def test_kill_9_of_run_takes_its_worker_down_and_frees_the_leader_lock(tmp_path: Path) -> None:
    stale = tmp_path / "assets" / ".upload-killed"
    stale.mkdir(parents=True)
    (stale / "z_18mr25.dbf").write_bytes(b"half an upload")
    two_hours_ago = time.time() - 7200
    for path in (stale / "z_18mr25.dbf", stale):
        os.utime(path, (two_hours_ago, two_hours_ago))
    with station_run(tmp_path) as (run, port, log):
        worker = wait_for(lambda: worker_pid(run.pid), "the worker started", log)
        web = [pid for pid, cmd in children(run.pid).items() if " serve " in cmd]
        wait_for(lambda: "worker is the leader" in log.read_text(), "the worker led", log)
        assert not stale.exists()  # swept at start
        lock = FileLeaderLock(tmp_path / "data" / "worker.lock")
        assert not lock.try_acquire()  # held by the running worker
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        wait_for(lambda: not alive(worker), "the orphaned worker stopped", log)
        wait_for(lambda: not any(alive(pid) for pid in web), "the web server stopped", log)
        assert lock.try_acquire()  # another worker can lead now
        lock.release()
