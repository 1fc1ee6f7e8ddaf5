"""The leader's heartbeat: written by its job, read by the system status API and page."""

from __future__ import annotations

import pytest

from alertstation.http.media import dumps
from alertstation.worker import heartbeat
from alertstation.worker.jobs import JOBS
from tests.support import StationHarness


def iso(value: object) -> str:
    """Return a datetime as the API writes it."""
    return dumps(value).decode().strip('"')


def status(station: StationHarness) -> dict:
    result = station.client.simulate_get("/api/system_status")
    assert result.status_code == 200
    return result.json["worker_heartbeat"]


def test_no_worker_ever_led_reads_none_and_the_page_says_so(station: StationHarness) -> None:
    assert status(station) is None
    station.add_user("ann", "viewer")
    page = station.sign_in("ann").request("GET", "/status", csrf=False)
    assert "never started" in page.text


def test_the_leader_job_beats_and_the_status_follows_its_age(station: StationHarness) -> None:
    assert "worker-heartbeat" in {job.name for job in JOBS}
    started = station.clock()
    heartbeat.beat(station.app.station)
    station.clock.advance(seconds=heartbeat.STALE_AFTER - 1)
    seen = status(station)
    assert seen["state"] == "running"
    assert seen["age_seconds"] == heartbeat.STALE_AFTER - 1
    assert seen["leader_since"] == iso(started)
    assert "host" not in seen and "pid" not in seen  # the answer is public
    station.clock.advance(seconds=1)
    assert status(station)["state"] == "stale"
    heartbeat.beat(station.app.station)  # the same process beats again: still the same leader
    seen = status(station)
    assert seen["state"] == "running" and seen["age_seconds"] == 0
    assert seen["leader_since"] == iso(started)


def test_a_new_leader_restarts_leader_since(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    heartbeat.beat(station.app.station)
    station.clock.advance(minutes=5)
    monkeypatch.setattr(heartbeat.os, "getpid", lambda: 999_999)
    heartbeat.beat(station.app.station)
    assert status(station)["leader_since"] == iso(station.clock())


def test_the_status_page_shows_a_stale_worker(station: StationHarness) -> None:
    heartbeat.beat(station.app.station)
    station.clock.advance(minutes=10)
    station.add_user("ann", "viewer")
    page = station.sign_in("ann").request("GET", "/status", csrf=False)
    assert "stale" in page.text and "no heartbeat since" in page.text
