"""The ``footprint`` group: memory of an idle station and how quickly commands start and stop.

Readings, not timings of a loop, each printed by ``benchmarks/report.py`` beside what it is
held against and the goal (issue: small and quick on a Pi-class host):

* ``footprint.web_tier``: PSS of ``alertstation serve --workers 1`` (gunicorn's arbiter and one
  web worker) against a bare Falcon app with one route under the same gunicorn (arbiter and
  one gthread worker). Goal: at most 2.5 times.
* ``footprint.station``: PSS of the whole tree of an idle ``alertstation run --workers 1``
  (SQLite, zone catalog loaded, one stream source on a private icecast2 mount, so one ffmpeg
  decoder), archive off, against 160 MiB; the same with the rolling archive on (its ffmpeg
  encoder too) is printed beside it.
* ``footprint.start.*``: wall time of ``alertstation version``, ``--help`` and ``traffic
  import`` of an empty file (best of five) against ``python -c "import sqlalchemy, falcon"``
  (goals 1.5 times, 1.5 times and 2 times); ``run`` until it prints "serving" and from SIGTERM
  until it has exited (goal 3 s each), on its second start (the first loads the zone catalog).

PSS (``benchmarks.footprint``) counts a page shared by n processes 1/n to each, as smem does.
With ``--benchmark-disable`` (``make test``) each reading is taken once, the station without
the settling wait and with the archive off only, so the code runs in CI without its cost.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.footprint import MIB, total_pss, tree_memory
from benchmarks.station_probe import MOUNT, fed_icecast, idle_station
from tests.processes import PYTHON, free_port, http_get, station_env, station_process, wait_until

STATION_GOAL_MIB = 160.0
WEB_TIER_GOAL = 2.5
FLOOR = [sys.executable, "-c", "import sqlalchemy, falcon"]

BARE_APP = """
import falcon

class Hello:
    def on_get(self, req, resp):
        resp.media = {"status": "ok"}

app = falcon.App()
app.add_route("/healthz", Hello())
"""


def _disabled(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("benchmark_disable", default=False))


def _reading(label: str, ours: float, against: float, unit: str, goal: str, most: float) -> dict:
    """One line of the report: ours, what it is held against, the goal (a ratio or a bound)."""
    return {
        "label": label,
        "ours": ours,
        "against": against,
        "unit": unit,
        "goal": goal,
        "max_ratio": most,
    }


def _record(benchmark: Any, readings: list[dict]) -> None:
    benchmark.group = "footprint"
    benchmark.extra_info["readings"] = readings
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


def _answers(url: str) -> bool:
    try:
        return http_get(url)[0] == 200
    except OSError:
        return False


def test_web_tier_against_a_bare_falcon_app(
    benchmark: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    (tmp_path / "bare_app.py").write_text(BARE_APP)
    port = free_port()
    bare = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "gthread"]
        + ["--threads", "4", "--bind", f"127.0.0.1:{port}", "bare_app:app"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _answers(f"http://127.0.0.1:{port}/healthz"), "bare app", None, 120)
        with station_process(tmp_path / "station", "serve") as served:
            served.wait_healthy()
            if not _disabled(request):
                time.sleep(5.0)  # start-up garbage collected on both sides
            ours = total_pss(tree_memory(served.process.pid))
            peer = total_pss(tree_memory(bare.pid))
    finally:
        bare.terminate()
        bare.wait(timeout=60)
    assert ours > 0 and peer > 0
    _record(
        benchmark,
        [
            _reading(
                "footprint.web_tier (bare Falcon)",
                ours / MIB,
                peer / MIB,
                "MiB",
                f"<= {WEB_TIER_GOAL}x",
                WEB_TIER_GOAL,
            )
        ],
    )


def test_whole_station_against_160_mib(benchmark: Any, request: pytest.FixtureRequest) -> None:
    disabled = _disabled(request)
    readings = []
    with fed_icecast() as server:
        for archive in (False,) if disabled else (False, True):
            settle = 0.0 if disabled else 20.0
            with idle_station(server.url(MOUNT), archive=archive, settle=settle) as served:
                rows = tree_memory(served.process.pid)
            assert any("ffmpeg" in row.command for row in rows), rows
            label = "footprint.station" + (" (archive on)" if archive else "")
            readings.append(
                _reading(
                    label,
                    total_pss(rows) / MIB,
                    STATION_GOAL_MIB,
                    "MiB",
                    f"<= {STATION_GOAL_MIB:.0f} MiB",
                    1.0,
                )
            )
    _record(benchmark, readings)


def _best(argv: list[str], env: dict[str, str], rounds: int, ok: tuple[int, ...] = (0,)) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, timeout=300)
        took = time.perf_counter() - start
        assert done.returncode in ok, done.stderr.decode()[-2000:]
        best = min(best, took)
    return best


def _run_ready_and_stop(root: Path, env: dict[str, str]) -> tuple[float, float]:
    """Start ``run``; return (seconds until it printed "serving", seconds from SIGTERM to exit)."""
    port = free_port()
    start = time.perf_counter()
    process = subprocess.Popen(
        [*PYTHON, "run", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        ready = None
        for line in process.stdout:
            if b"serving on" in line:
                ready = time.perf_counter() - start
                break
        assert ready is not None, "run never printed that it serves"
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # it accepts at once
        wait_until(lambda: _supervising(root), "run did not supervise", None, 120)
        stop = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
        stopped = time.perf_counter() - stop
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    return ready, stopped


def _supervising(root: Path) -> bool:
    state = root / "data" / "supervisor.json"
    return state.is_file()


def test_start_up_and_stop_against_the_import_floor(
    benchmark: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rounds = 1 if _disabled(request) else 5
    env = station_env(tmp_path)
    subprocess.run([*PYTHON, "migrate"], env=env, check=True, capture_output=True, timeout=300)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    floor = _best(FLOOR, env, rounds)
    version = _best([*PYTHON, "version"], env, rounds)
    helped = _best([*PYTHON, "--help"], env, rounds)
    imported = _best([*PYTHON, "traffic", "import", str(empty)], env, rounds, ok=(0, 1))
    _run_ready_and_stop(tmp_path, env)  # the first start loads the zone catalog: not timed
    ready, stopped = _run_ready_and_stop(tmp_path, env)
    _record(
        benchmark,
        [
            _reading("footprint.start.version", version, floor, "s", "<= 1.5x floor", 1.5),
            _reading("footprint.start.help", helped, floor, "s", "<= 1.5x floor", 1.5),
            _reading("footprint.start.traffic_import", imported, floor, "s", "<= 2x floor", 2.0),
            _reading("footprint.start.run_ready", ready, 3.0, "s", "<= 3 s", 1.0),
            _reading("footprint.start.sigterm_stop", stopped, 3.0, "s", "<= 3 s", 1.0),
        ],
    )
