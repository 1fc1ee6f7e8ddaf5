"""Start and stop gunicorn on a free loopback port: the station, or a bare peer app."""

from __future__ import annotations

import json
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKERS = 2  # `alertstation serve` defaults: 2 gthread workers of 4 threads
THREADS = 4
READY_SECONDS = 90.0  # generous: CI is a loaded 2-core machine
STOP_SECONDS = 30.0
REPO = Path(__file__).resolve().parents[2]
STATION = "station"


@dataclass(frozen=True)
class Running:
    """A gunicorn serving on ``base_url``; its output goes to ``log``."""

    name: str
    base_url: str
    pid: int
    log: Path


def free_port() -> int:
    """Return a loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(name: str, bind: str, data_dir: Path) -> list[str]:
    """Return the command line serving ``name`` ("station", "falcon" or "flask")."""
    options = ["--bind", bind, "--workers", str(WORKERS), "--threads", str(THREADS)]
    if name == STATION:
        return [sys.executable, "-m", "alertstation", "serve", *options]
    module = "benchmarks.http.peer_server"
    return [sys.executable, "-m", module, name, *options, "--data-dir", str(data_dir)]


@contextmanager
def serving(name: str, data_dir: Path, database_url: str, ready_path: str) -> Iterator[Running]:
    """Run gunicorn for ``name`` until the block ends; ready once ``ready_path`` answers 200."""
    port = free_port()
    log = data_dir / f"gunicorn-{name}.log"
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(data_dir),
        "ALERTSTATION_ASSETS_DIR": str(data_dir / "assets"),
        "DATABASE_URL": database_url,
        "BENCH_DATABASE_URL": database_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            command(name, f"127.0.0.1:{port}", data_dir),
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Running(name, f"http://127.0.0.1:{port}", process.pid, log)
    try:
        wait_ready(process, running, ready_path)
        yield running
    finally:
        stop(process)


def wait_ready(process: subprocess.Popen[bytes], running: Running, path: str) -> None:
    """Wait until ``path`` answers 200; fail with the server's log if it exits or never does."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{running.name} exited {process.returncode}: {tail(running.log)}")
        try:
            with urllib.request.urlopen(running.base_url + path, timeout=5) as answer:
                if answer.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{running.name} not ready in {READY_SECONDS:.0f} s: {tail(running.log)}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop gunicorn: SIGINT, its quick shutdown (nothing is in flight once wrk has ended)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_SECONDS)


def tail(path: Path, lines: int = 20) -> str:
    """Return the last lines of a log for an error message."""
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def get_json(base_url: str, path: str, headers: dict[str, str]) -> tuple[int, dict, dict]:
    """Return (status, headers by lower-case name, JSON body) of one GET."""
    request = urllib.request.Request(base_url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, _lower(answer.headers.items()), json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, _lower(error.headers.items()), json.loads(error.read() or b"{}")


def _lower(items: Any) -> dict[str, str]:
    """Return headers keyed by lower-case name (HTTP names are case-insensitive)."""
    return {name.lower(): value for name, value in items}
