"""The supervisor's rules (back-off, giving up) and its loop with real child processes."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from alertstation.worker import supervisor
from alertstation.worker.supervisor import RestartPolicy, Supervisor, describe_exit, read_state
from tests.support import StationHarness

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
FAILING = [sys.executable, "-c", "raise SystemExit(3)"]


def test_the_delay_doubles_per_recent_exit_and_is_capped() -> None:
    policy = RestartPolicy(initial_delay=1.0, max_delay=10.0, max_restarts=99, window=600.0)
    exits: list[float] = []
    delays = []
    for at in range(6):
        exits.append(float(at))
        delays.append(policy.delay(exits, float(at)))
    assert delays == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    # exits older than the window no longer count: back to the first delay
    assert policy.delay([*exits, 1000.0], 1000.0) == 1.0


def test_it_gives_up_after_more_than_max_restarts_exits_in_the_window() -> None:
    policy = RestartPolicy(max_restarts=3, window=60.0)
    assert not policy.give_up([0.0, 1.0, 2.0], 2.0)
    assert policy.give_up([0.0, 1.0, 2.0, 3.0], 3.0)
    assert not policy.give_up([0.0, 1.0, 2.0, 70.0], 70.0)  # spread out: keep trying


def test_exit_statuses_read_as_words() -> None:
    assert describe_exit(3) == "exit status 3"
    assert describe_exit(-9) == "killed by SIGKILL"


class Driver:
    """A fake monotonic clock that the injected sleep moves; ``stop_after`` sleeps, it stops."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.stop_after = stop_after

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.now += seconds
        time.sleep(0.02)  # let real children run
        return self.stop_after is not None and len(self.sleeps) >= self.stop_after


def starter(argv: list[str], started: list[subprocess.Popen[bytes]]):  # noqa: ANN201
    def start() -> subprocess.Popen[bytes]:
        started.append(subprocess.Popen(argv))
        return started[-1]

    return start


def test_a_worker_that_keeps_failing_stops_the_web_and_exits_non_zero(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    webs: list[subprocess.Popen[bytes]] = []
    workers: list[subprocess.Popen[bytes]] = []
    driver = Driver()
    policy = RestartPolicy(initial_delay=0.1, max_delay=0.4, max_restarts=3, window=600.0)
    loop = Supervisor(
        start_web=starter(SLEEPER, webs),
        start_worker=starter(FAILING, workers),
        state_path=tmp_path / "supervisor.json",
        sleep=driver.sleep,
        monotonic=driver.monotonic,
        policy=policy,
        poll_seconds=0.05,
    )
    with caplog.at_level(logging.INFO, logger="alertstation.supervisor"):
        assert loop.run() == 1
    assert len(workers) == 4  # the first start and three restarts, then it gave up
    assert webs[0].poll() is not None  # the web server was stopped too
    assert loop.state.state == "failed" and loop.state.restarts == 3
    assert loop.state.last_exit == "exit status 3"
    # the back-off waited 0.1, 0.2 and 0.4 s of the injected clock between the starts
    assert sum(driver.sleeps) >= 0.7
    messages = [record.getMessage() for record in caplog.records]
    assert sum("exited unexpectedly (exit status 3)" in m for m in messages) == 3
    assert any("giving up" in m for m in messages)
    assert read_state(tmp_path) is not None  # this process wrote it and is alive
    assert read_state(tmp_path)["state"] == "failed"


def test_a_stop_request_ends_both_children_and_exits_zero(tmp_path: Path) -> None:
    webs: list[subprocess.Popen[bytes]] = []
    workers: list[subprocess.Popen[bytes]] = []
    loop = Supervisor(
        start_web=starter(SLEEPER, webs),
        start_worker=starter(SLEEPER, workers),
        state_path=tmp_path / "supervisor.json",
        sleep=Driver(stop_after=3).sleep,
        monotonic=time.monotonic,
    )
    assert loop.run() == 0
    assert webs[0].poll() is not None and workers[0].poll() is not None
    assert len(workers) == 1 and loop.state.state == "stopped"


def test_a_web_server_exit_stops_the_station(tmp_path: Path) -> None:
    workers: list[subprocess.Popen[bytes]] = []
    loop = Supervisor(
        start_web=starter(FAILING, []),
        start_worker=starter(SLEEPER, workers),
        state_path=tmp_path / "supervisor.json",
        sleep=Driver().sleep,
        monotonic=time.monotonic,
    )
    assert loop.run() == 1
    assert workers[0].poll() is not None


def test_a_state_file_of_a_dead_run_reads_as_none(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    (tmp_path / supervisor.STATE_FILE).write_text(
        f'{{"pid": {int(dead.stdout)}, "state": "running", "restarts": 0}}'
    )
    assert read_state(tmp_path) is None
    (tmp_path / supervisor.STATE_FILE).write_text("not json")
    assert read_state(tmp_path) is None


def test_a_child_whose_parent_is_not_run_exits_at_once() -> None:
    code = "from alertstation.worker.supervisor import die_with_parent; die_with_parent()"
    env = {**os.environ, supervisor.PARENT_ENV: "1"}  # pid 1 is not our parent
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
    assert result.returncode == 1
    env[supervisor.PARENT_ENV] = str(os.getpid())
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


def test_the_status_api_and_page_show_the_supervisor(station: StationHarness) -> None:
    assert station.client.simulate_get("/api/system_status").json["worker_supervisor"] is None
    state = supervisor.SupervisorState(started_at=station.clock())
    state.restarts, state.state = 2, "running"
    state.last_exit, state.last_exit_status = "killed by SIGKILL", -9
    state.last_exit_at = station.clock()
    data_dir = station.app.station.settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    supervisor.write_state(data_dir / supervisor.STATE_FILE, state)
    seen = station.client.simulate_get("/api/system_status").json["worker_supervisor"]
    assert seen["state"] == "running" and seen["restarts"] == 2
    assert seen["last_exit"] == "killed by SIGKILL" and "pid" not in seen
    station.add_user("ann", "viewer")
    page = station.sign_in("ann").request("GET", "/status", csrf=False)
    assert 'id="worker-supervisor"' in page.text and "2 restarts" in page.text
    assert "killed by SIGKILL" in page.text
