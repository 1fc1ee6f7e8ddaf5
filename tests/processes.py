"""Start the station as real processes (`run`, `serve`) on loopback ports, and talk to them.

Shared by the tests that need a real gunicorn: they get a fresh SQLite data directory, a free
port, the process in its own session (so one signal stops every child), its log in a file, and
waits with generous deadlines (CI is a loaded 2-core machine).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import TypeVar

#: How long a test waits for a daemon to come up or for a line to appear.
DEADLINE = 90.0
PYTHON = (sys.executable, "-m", "alertstation")

T = TypeVar("T")


def free_port() -> int:
    """Return a loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(url: str, timeout: float = 5.0) -> tuple[int, Message, bytes]:
    """GET ``url``: status, headers and body, for error statuses too (no proxy is used)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as ex:
        return ex.code, ex.headers, ex.read()


def wait_until(
    predicate: Callable[[], T], what: str, log: Path | None = None, deadline: float = DEADLINE
) -> T:
    """Return the first truthy value of ``predicate``; fail after ``deadline`` s with the log."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    shown = f"\n{log.read_text()[-6000:]}" if log is not None and log.exists() else ""
    raise AssertionError(f"{what} within {deadline:.0f} s{shown}")


def station_env(root: Path, **extra: str) -> dict[str, str]:
    """Return an environment for a station on SQLite under ``root`` (data/ and assets/)."""
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(root / "data"),
        "ALERTSTATION_ASSETS_DIR": str(root / "assets"),
        "ALERTSTATION_LOG_FORMAT": "json",
        **extra,
    }
    env.pop("DATABASE_URL", None)
    (root / "assets").mkdir(parents=True, exist_ok=True)
    return env


@dataclass
class Served:
    """A running station process: the process, its port and its log file."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[int, Message, bytes]:
        return http_get(self.base + path)

    def text(self) -> str:
        return self.log.read_text()

    def wait_healthy(self, deadline: float = DEADLINE) -> None:
        """Wait until ``/healthz`` answers (any status); fail early if the process died."""

        def answered() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"the station exited:\n{self.text()[-6000:]}")
            try:
                self.get("/healthz")
            except (OSError, urllib.error.URLError):
                return False
            return True

        wait_until(answered, "the station did not answer /healthz", self.log, deadline)


@contextmanager
def station_process(
    root: Path,
    command: str = "run",
    *,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = ("--workers", "1"),
    migrate: bool = True,
) -> Iterator[Served]:
    """Run ``alertstation <command> --bind 127.0.0.1:<free port>`` and stop it afterwards."""
    environment = dict(env) if env is not None else station_env(root)
    if migrate:
        subprocess.run(
            [*PYTHON, "migrate"], env=environment, check=True, capture_output=True, timeout=120
        )
    port = free_port()
    log_path = root / f"{command}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*PYTHON, command, "--bind", f"127.0.0.1:{port}", *args],
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield Served(process, port, log_path)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        process.wait(timeout=60)
