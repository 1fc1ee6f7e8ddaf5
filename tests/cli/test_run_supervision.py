"""`alertstation run` supervises its worker: restarts it, and takes it down when killed itself."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from alertstation.worker.leader import FileLeaderLock
from tests.processes import http_get, station_process, wait_until


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


def worker_pid(run_pid: int) -> int | None:
    pids = [pid for pid, cmd in children(run_pid).items() if " -m alertstation.background" in cmd]
    return pids[0] if len(pids) == 1 else None


def system_status(port: int) -> dict | None:
    try:
        status, _, body = http_get(f"http://127.0.0.1:{port}/api/system_status")
    except (OSError, urllib.error.URLError):
        return None
    return orjson.loads(body) if status == 200 else None


@contextmanager
def station_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """Start `alertstation run` on a free loopback port with a fresh SQLite data dir."""
    with station_process(tmp_path) as served:
        yield served.process, served.port, served.log


@pytest.mark.slow
def test_a_killed_worker_is_logged_and_restarted(tmp_path: Path) -> None:
    with station_run(tmp_path) as (run, port, log):
        first = wait_until(lambda: worker_pid(run.pid), "the worker started", log)
        wait_until(lambda: "worker is the leader" in log.read_text(), "the worker led", log)
        status = wait_until(lambda: system_status(port), "the web answered", log)
        assert status["worker_supervisor"]["state"] == "running"
        assert status["worker_supervisor"]["restarts"] == 0
        os.kill(first, signal.SIGKILL)
        second = wait_until(
            lambda: (pid := worker_pid(run.pid)) not in (None, first) and pid,
            "a new worker started",
            log,
        )
        assert second != first
        text = log.read_text()
        assert f"the worker (pid {first}) exited unexpectedly (killed by SIGKILL)" in text
        assert "the worker was restarted as pid" in text
        status = wait_until(
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
        worker = wait_until(lambda: worker_pid(run.pid), "the worker started", log)
        web = [pid for pid, cmd in children(run.pid).items() if " -m alertstation.server " in cmd]
        wait_until(lambda: "worker is the leader" in log.read_text(), "the worker led", log)
        assert not stale.exists()  # swept at start
        lock = FileLeaderLock(tmp_path / "data" / "worker.lock")
        assert not lock.try_acquire()  # held by the running worker
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        wait_until(lambda: not alive(worker), "the orphaned worker stopped", log)
        wait_until(lambda: not any(alive(pid) for pid in web), "the web server stopped", log)
        assert lock.try_acquire()  # another worker can lead now
        lock.release()
