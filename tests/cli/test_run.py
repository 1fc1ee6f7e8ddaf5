"""`alertstation run` serves a real gunicorn with the worker beside it."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import orjson
import pytest

from tests.processes import station_env, station_process, wait_until
from tests.support import SHARED_DATA

LAND = SHARED_DATA / "zones" / "z_18mr25.dbf"


@pytest.mark.slow
def test_run_serves_healthz_and_elects_the_worker(tmp_path: Path) -> None:
    env = station_env(tmp_path)
    if LAND.is_file():  # a zone file dropped into assets/ is loaded at start
        shutil.copy(LAND, tmp_path / "assets" / LAND.name)
    with station_process(tmp_path, env=env) as served:
        served.wait_healthy()
        status, headers, body = served.get("/healthz")
        assert status == 200, served.text()
        assert orjson.loads(body)["status"] == "ok"
        assert headers.get("X-Request-ID")
        if LAND.is_file():
            assert "zone catalog: public" in served.text()
        status, _, body = served.get("/")
        assert status == 401 and orjson.loads(body)["error"]["code"] == "unauthorized"
        # The worker, gunicorn's arbiter and the server's background log writer each write
        # their own lines, in no fixed order: wait for all of them under one deadline.
        expected = [
            "worker is the leader",
            f"Control socket listening at {tmp_path / 'data' / 'gunicorn.ctl'}",
            '"path":"/healthz"',
        ]
        wait_until(
            lambda: all(line in served.text() for line in expected),
            f"the log did not show all of {expected}",
            served.log,
        )
        assert '"status":200' in served.text()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "serve"])
def test_serving_is_printed_only_once_the_port_accepts(tmp_path: Path, command: str) -> None:
    """The "serving on" line comes from the first web worker, once it is about to accept: a
    connection made the moment the line is seen is accepted at once, never refused."""
    with station_process(tmp_path, command) as served:
        line = f"serving on http://127.0.0.1:{served.port}/"
        wait_until(lambda: line in served.text(), f"{command} never printed {line!r}", served.log)
        socket.create_connection(("127.0.0.1", served.port), timeout=30).close()
        assert served.text().count(line) == 1
        served.wait_healthy()
