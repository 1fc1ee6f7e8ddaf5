"""Security Center parts: report windows, the jail probe cache, the automatic-ban reader."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Connection

from alertstation.security.autoban.settings import load_settings as load_autoban_settings
from alertstation.security.center import service as cs
from alertstation.security.hostban.service import HostbanSettings
from alertstation.security.hostban.tables import DEFAULTS

NOW = datetime(2026, 11, 21, 12, 30, 15, tzinfo=UTC)


def test_window_is_open_on_the_left_and_lists_the_hours_it_touches() -> None:
    day = cs.Window.ending(NOW, 1)
    assert day.start == NOW - timedelta(days=1) and day.end == NOW
    hours = day.hours()
    assert hours[0] == datetime(2026, 11, 20, 12, tzinfo=UTC)
    assert hours[-1] == datetime(2026, 11, 21, 12, tzinfo=UTC)
    assert len(hours) == 25
    on_the_hour = cs.Window.ending(NOW.replace(minute=0, second=0), 7).hours()
    assert len(on_the_hour) == 7 * 24 + 1
    naive = cs.Window.ending(NOW.replace(tzinfo=None), 1)
    assert naive.end == NOW, "a naive clock value is read as UTC"
    with pytest.raises(ValueError, match="days must be one of 1, 7"):
        cs.Window.ending(NOW, 3)


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.value = 1000.0

    def __call__(self) -> float:
        return self.value


def unreachable(tmp_path: Path) -> HostbanSettings:
    """Settings aimed at a socket nobody listens on (the client fails fast)."""
    values = {**DEFAULTS, "mirror_enabled": True, "socket_path": str(tmp_path / "none.sock")}
    return HostbanSettings(**values)  # type: ignore[arg-type]


def test_probe_is_reused_within_its_ttl_and_per_generation(tmp_path: Path) -> None:
    ticks = Ticks()
    cache = cs.JailProbeCache(ttl=60, monotonic=ticks)
    settings = unreachable(tmp_path)
    first = cache.get(settings, 5, NOW)
    assert first is not None and first.banned is None and first.error
    assert first.checked_at == NOW

    ticks.value += 59
    assert cache.get(settings, 5, NOW + timedelta(seconds=59)) is first
    changed = cache.get(settings, 6, NOW + timedelta(seconds=59))
    assert changed is not first and changed is not None
    assert changed.checked_at == NOW + timedelta(seconds=59), "a ban list change re-probes"
    ticks.value += 60
    expired = cache.get(settings, 6, NOW + timedelta(minutes=2))
    assert expired is not changed and expired is not None
    assert expired.checked_at == NOW + timedelta(minutes=2)
    other_socket = HostbanSettings(**{**settings.as_dict(), "socket_path": str(tmp_path / "b")})
    assert cache.get(other_socket, 6, NOW).key != expired.key


def test_a_probe_in_progress_is_not_waited_for(tmp_path: Path) -> None:
    ticks = Ticks()
    cache = cs.JailProbeCache(ttl=60, monotonic=ticks)
    settings = unreachable(tmp_path)
    first = cache.get(settings, 1, NOW)
    ticks.value += 120
    with cache._lock:  # another request is probing right now
        assert cache.get(settings, 1, NOW) is first, "the last probe stands in meanwhile"
        assert cache.get(settings, 2, NOW) is None, "no stale probe of another ban list"


def test_host_firewall_state_counts() -> None:
    settings = HostbanSettings(**{**DEFAULTS, "mirror_enabled": True})  # type: ignore[arg-type]
    desired = {"192.0.2.1", "192.0.2.2", "192.0.2.3"}
    probe = cs.JailProbe(frozenset({"192.0.2.1", "192.0.2.9"}), None, NOW, (), 0.0)
    state = cs.host_firewall_state(settings, desired, probe)
    assert state["state"] == "pending" and state["mirrored"] == 1
    assert state["firewall_pending"] == 2 and state["mirrorable"] == 3
    full = cs.JailProbe(frozenset(desired), None, NOW, (), 0.0)
    assert cs.host_firewall_state(settings, desired, full)["state"] == "ok"
    unknown = cs.host_firewall_state(settings, desired, None)
    assert unknown["state"] == "unknown" and unknown["mirrored"] is None
    off = HostbanSettings(**DEFAULTS)  # type: ignore[arg-type]
    assert cs.host_firewall_state(off, desired, full)["firewall_pending"] == 0


def test_automatic_bans_state_reads_the_real_settings(conn: Connection) -> None:
    settings = load_autoban_settings(conn)
    expected = {source: rule.enabled for source, rule in settings.rules.items()}
    assert expected, "the reader lists its detectors"
    assert cs.automatic_bans_state(conn) == {
        "available": True,
        "enabled": any(expected.values()),
        "detectors": expected,
    }


def test_automatic_bans_state_tolerates_a_failing_reader(
    conn: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_conn: Connection) -> None:
        raise RuntimeError("no such table: autoban_rules")

    monkeypatch.setattr(cs, "load_autoban_settings", broken)
    assert cs.automatic_bans_state(conn) == {"available": True, "enabled": None, "detectors": {}}


def test_gate_state_names() -> None:
    assert cs.gate_state(None) == {"state": "open", "entries": 0}
    assert cs.gate_state(0) == {"state": "idle", "entries": 0}
    assert cs.gate_state(3) == {"state": "enforcing", "entries": 3}
