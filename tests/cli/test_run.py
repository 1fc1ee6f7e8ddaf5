"""`alertstation run` serves a real gunicorn with the worker beside it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

import orjson
import pytest

from tests.support import SHARED_DATA

LAND = SHARED_DATA / "zones" / "z_18mr25.dbf"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, Message, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as ex:
        return ex.code, ex.headers, ex.read()


@pytest.mark.slow
def test_run_serves_healthz_and_elects_the_worker(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "ALERTSTATION_ASSETS_DIR": str(tmp_path / "assets"),
        "ALERTSTATION_LOG_FORMAT": "json",
    }
    env.pop("DATABASE_URL", None)
    python = [sys.executable, "-m", "alertstation"]
    (tmp_path / "assets").mkdir()
    if LAND.is_file():  # a zone file dropped into assets/ is loaded at start
        shutil.copy(LAND, tmp_path / "assets" / LAND.name)
    subprocess.run([*python, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    port = _free_port()
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*python, "run", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            try:
                status, headers, body = _get(f"http://127.0.0.1:{port}/healthz")
                break
            except (ConnectionError, urllib.error.URLError, TimeoutError):
                time.sleep(0.2)
        assert status == 200, log_path.read_text()
        assert orjson.loads(body)["status"] == "ok"
        assert headers.get("X-Request-ID")
        if LAND.is_file():
            assert "zone catalog: public" in log_path.read_text()
        status, _, body = _get(f"http://127.0.0.1:{port}/")
        assert status == 401 and orjson.loads(body)["error"]["code"] == "unauthorized"
        # The worker, gunicorn's arbiter and the server's background log writer each write
        # their own lines, in no fixed order: wait for all of them under one deadline.
        expected = [
            "worker is the leader",
            f"Control socket listening at {tmp_path / 'data' / 'gunicorn.ctl'}",
            '"path":"/healthz"',
        ]
        deadline = time.monotonic() + 60
        text = log_path.read_text()
        while any(line not in text for line in expected) and time.monotonic() < deadline:
            time.sleep(0.2)
            text = log_path.read_text()
        for line in expected:
            assert line in text, text[-4000:]
        assert '"path":"/healthz"' in text and '"status":200' in text
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
