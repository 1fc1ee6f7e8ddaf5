"""The benchmark harness never times a refusal and never reports a missing group as success."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import falcon.testing
import pytest

from alertstation.app import create_app
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from benchmarks import report
from benchmarks.bench_security_bantable import CLEAN, check_never_refused, quiet_flood_rule
from benchmarks.bench_traffic_analytics import RoundTimes
from tests.support import Clock, make_settings

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FLOOD = 300  # requests within 10 s: the stored default


def _gate_client(tmp_path: Path, quiet: bool) -> tuple[falcon.testing.TestClient, object]:
    engine = make_engine(f"sqlite:///{tmp_path / 'station.db'}")
    upgrade_to_head(engine)
    if quiet:
        with begin_write(engine) as conn:
            quiet_flood_rule(conn, Clock()())
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    return falcon.testing.TestClient(create_app(settings, engine=engine)), engine


def _flood(client: falcon.testing.TestClient) -> list[falcon.testing.Result]:
    return [client.simulate_get("/login", remote_addr=CLEAN) for _ in range(DEFAULT_FLOOD + 20)]


def test_the_gate_benchmark_client_is_counted_but_never_banned(tmp_path: Path) -> None:
    client, engine = _gate_client(tmp_path, quiet=True)
    page = client.simulate_get("/login", remote_addr=CLEAN).content
    results = _flood(client)
    assert {result.status_code for result in results} == {200}
    check_never_refused(engine, results[-1], page)  # type: ignore[arg-type]


def test_the_refusal_guard_catches_a_client_the_flood_detector_banned(tmp_path: Path) -> None:
    client, engine = _gate_client(tmp_path, quiet=False)
    page = client.simulate_get("/login", remote_addr=CLEAN).content
    results = _flood(client)
    assert 403 in {result.status_code for result in results}
    with pytest.raises(AssertionError):
        check_never_refused(engine, results[-1], page)  # type: ignore[arg-type]


def _bench(
    name: str, group: str, role: str | None, median: float, **more: object
) -> dict[str, object]:
    extra = {"role": role, "peer": "the peer", **more}
    return {"name": name, "group": group, "extra_info": extra, "stats": {"median": median}}


def _write(tmp_path: Path, benchmarks: list[dict[str, object]]) -> str:
    path = tmp_path / "latest.json"
    path.write_text(json.dumps({"benchmarks": benchmarks}))
    return str(path)


def test_report_prints_each_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_bench("a", "g.one", "ours", 0.001), _bench("b", "g.one", "peer", 0.004)]
    assert report.main([_write(tmp_path, runs)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("g.one"))
    assert line.split()[-3:] == ["4.00x", "the", "peer"]


@pytest.mark.parametrize("runs", [[], [_bench("a", "g.one", "ours", 0.001)]])
def test_report_fails_on_a_group_missing_a_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], runs: list[dict[str, object]]
) -> None:
    assert report.main([_write(tmp_path, runs)]) == 1


SKIPPING = """
import pytest

def test_runs():
    pass

def test_peer_missing():
    pytest.skip("the peer is not installed")
"""


@pytest.mark.parametrize(("strict", "code"), [("1", 1), ("", 0)])
def test_a_skipped_benchmark_fails_make_bench(tmp_path: Path, strict: str, code: int) -> None:
    (tmp_path / "bench_skipping.py").write_text(SKIPPING)
    env = {**os.environ, "ALERTSTATION_BENCH_NO_SKIPS": strict}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "benchmarks.conftest", "-c", str(ROOT / "pyproject.toml")]
    command += ["--rootdir", str(ROOT), str(tmp_path / "bench_skipping.py")]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == code, done.stdout + done.stderr
    listed = "::test_peer_missing: Skipped: the peer is not installed"
    assert (listed in done.stdout) == bool(strict)


def test_report_fails_when_no_benchmark_finished(tmp_path: Path) -> None:
    assert report.main([str(tmp_path / "latest.json")]) == 1


def test_round_times_reads_back_each_timed_round_in_order() -> None:
    timer = RoundTimes([0.5, 0.25, 2.0])
    durations = []
    for _ in range(3):  # as benchmark.pedantic reads its timer: before and after each round
        start = timer()
        durations.append(timer() - start)
    assert durations == [0.5, 0.25, 2.0]
    timer()
    with pytest.raises(RuntimeError, match="more rounds"):
        timer()  # a fourth round was never timed


def test_report_prints_readings_with_their_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readings = [
        {
            "label": "footprint.station",
            "ours": 200.0,
            "against": 160.0,
            "unit": "MiB",
            "goal": "<= 160 MiB",
            "max_ratio": 1.0,
        },
        {
            "label": "footprint.start.version",
            "ours": 0.6,
            "against": 0.5,
            "unit": "s",
            "goal": "<= 1.5x floor",
            "max_ratio": 1.5,
        },
    ]
    runs = [_bench("r", "footprint", None, 0.0, readings=readings)]
    assert report.main([_write(tmp_path, runs)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert lines["footprint.station"].endswith("1.25x  <= 160 MiB (MISSED)")
    assert lines["footprint.start.version"].endswith("1.20x  <= 1.5x floor (met)")
