"""The security log of the host firewall bridge: line format, what is logged and when, the filter.

The fail2ban filter is checked with ``fail2ban-regex`` from the Debian package; the daemon reading
the log is exercised in ``test_hostban_daemon.py``.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from alertstation.db.engine import begin_write
from alertstation.security.bans import service
from alertstation.security.bans.entries import NewFilter
from alertstation.security.hostban import log as hostban_log
from alertstation.security.hostban import service as hs
from tests.security.conftest import ADMIN_IP
from tests.security.test_hostban import offline_settings
from tests.support import SignedIn, pg_required
from tests.support import StationHarness as Station

LINE = re.compile(
    r"^(?P<stamp>\S+) alertstation (?P<action>ban|unban) (?P<address>\S+) "
    r"source=(?P<source>[a-z_]+)(?: reason=(?P<reason>\".*\"))?$"
)


def read_log(path: Path) -> list[dict[str, str]]:
    """Return the parsed lines of a security log (every line must parse)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="ascii").splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    return [match.groupdict() for match in parsed if match]


def events(path: Path) -> list[tuple[str, str]]:
    """Return (action, address) for each line, in order."""
    return [(line["action"], line["address"]) for line in read_log(path)]


def ban(who: SignedIn, value: str, **extra: Any) -> dict[str, Any]:
    """Add a blocklist entry through the API and return it."""
    answer = who.request(
        "POST", "/security/ip-filters", json={"value": value, **extra}, remote_addr=ADMIN_IP
    )
    assert answer.status_code == 201, answer.text
    return answer.json["filter"]


def configure(who: SignedIn, tmp_path: Path, **extra: Any) -> Any:
    """Save settings pointing at tmp_path (no daemon), without applying them."""
    body = offline_settings(tmp_path, apply=False, **extra)
    answer = who.request("POST", "/admin/hostban/configure", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json


def test_line_format_quotes_and_shortens_the_reason() -> None:
    when = datetime(2026, 11, 21, 16, 23, 31, 123456, tzinfo=UTC)
    reason = 'line one\n2026-11-21T00:00:00+00:00 alertstation ban 8.8.8.8 "x"\\ \u00e9' + "z" * 300
    line = hostban_log.format_line(when, "ban", "203.0.113.7", "login_brute_force", reason)
    assert line.endswith("\n") and line.count("\n") == 1 and line.isascii()
    match = LINE.match(line.rstrip("\n"))
    assert match is not None
    assert datetime.fromisoformat(match["stamp"]) == when.replace(microsecond=123000)
    assert match["address"] == "203.0.113.7" and match["source"] == "login_brute_force"
    assert match["reason"].startswith('"line one 2026-11-21T00:00:00+00:00 alertstation ban')
    assert '\\"x\\"' in match["reason"] and "\\u00e9" in match["reason"]
    assert len(match["reason"]) < hostban_log.REASON_MAX + 20

    unban = hostban_log.format_line(when, "unban", "2001:db8::7", "manual", "not shown")
    assert unban.endswith(" alertstation unban 2001:db8::7 source=manual\n")
    odd = hostban_log.format_line(when, "ban", "203.0.113.7", "Bad Source\n", "   ")
    assert odd.endswith(" source=unknown\n")
    for value in ("192.0.2.0/24", "127.0.0.1", "::1", "fe80::1"):
        with pytest.raises(ValueError):
            hostban_log.format_line(when, "ban", value, "manual")
    with pytest.raises(ValueError):
        hostban_log.format_line(when, "lift", "203.0.113.7", "manual")


def test_bans_and_lifts_of_mirrorable_addresses_are_logged_once(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    configure(admin, tmp_path, mirror_enabled=True)
    log_file = tmp_path / "security.log"
    first = ban(admin, "203.0.113.7", reason="brute force\nalertstation ban 8.8.8.8 source=x")
    ban(admin, "192.0.2.0/24")
    ban(admin, "127.0.0.2")
    ban(admin, "2001:db8::9", source="flood")
    lines = read_log(log_file)
    assert [(line["action"], line["address"], line["source"]) for line in lines] == [
        ("ban", "203.0.113.7", "manual"),
        ("ban", "2001:db8::9", "flood"),
    ]
    assert lines[0]["reason"] == '"brute force alertstation ban 8.8.8.8 source=x"'
    assert (log_file.stat().st_mode & 0o777) == 0o640

    # Status and resync run the self-heal: nothing new to log.
    assert admin.request("GET", "/admin/hostban/status").status_code == 200
    assert len(read_log(log_file)) == 2

    path = f"/security/ip-filters/{first['id']}"
    off = admin.request("PATCH", path, json={"active": False}, remote_addr=ADMIN_IP)
    assert off.status_code == 200
    moved = admin.request(
        "PATCH", path, json={"active": True, "value": "203.0.113.70"}, remote_addr=ADMIN_IP
    )
    assert moved.status_code == 200, moved.text
    short = ban(admin, "198.18.0.5", duration_minutes=1)
    station.clock.advance(minutes=2)
    assert admin.request("GET", "/admin/hostban/status").status_code == 200
    removed = admin.request("DELETE", f"/security/ip-filters/{short['id']}", remote_addr=ADMIN_IP)
    assert removed.status_code == 200
    assert events(log_file)[2:] == [
        ("unban", "203.0.113.7"),
        ("ban", "203.0.113.70"),
        ("ban", "198.18.0.5"),
        ("unban", "198.18.0.5"),
    ]
    unban_lines = [line for line in read_log(log_file) if line["action"] == "unban"]
    assert all(line["reason"] is None for line in unban_lines)


def test_mirror_toggle_logs_lifts_when_off_and_bans_when_on(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    log_file = tmp_path / "security.log"
    configure(admin, tmp_path)
    ban(admin, "203.0.113.7")
    assert not log_file.exists(), "nothing is logged while the mirror is off"

    turned_on = configure(admin, tmp_path, mirror_enabled=True)
    assert turned_on["sync"]["mirrorable"] == 1 and turned_on["sync"]["sync_error"]
    ban(admin, "203.0.113.8")
    assert events(log_file) == [("ban", "203.0.113.7"), ("ban", "203.0.113.8")]

    turned_off = configure(admin, tmp_path, mirror_enabled=False)
    assert turned_off["sync"]["firewall_pending"] == 0
    ban(admin, "203.0.113.9")
    assert events(log_file)[2:] == [("unban", "203.0.113.7"), ("unban", "203.0.113.8")]

    configure(admin, tmp_path, mirror_enabled=True)
    assert sorted(events(log_file)[4:]) == [
        ("ban", "203.0.113.7"),
        ("ban", "203.0.113.8"),
        ("ban", "203.0.113.9"),
    ]

    # A new log file starts with every current ban.
    moved = tmp_path / "moved.log"
    configure(admin, tmp_path, log_file=str(moved))
    assert events(moved) == []
    ban(admin, "203.0.113.10")
    assert sorted(events(moved)) == [
        ("ban", "203.0.113.10"),
        ("ban", "203.0.113.7"),
        ("ban", "203.0.113.8"),
        ("ban", "203.0.113.9"),
    ]


def test_unwritable_log_never_fails_a_ban_and_is_caught_up(
    station: Station, admin: SignedIn, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log_file = tmp_path / "missing" / "security.log"
    configure(admin, tmp_path, mirror_enabled=True, log_file=str(log_file))
    with caplog.at_level(logging.WARNING, logger="alertstation.security.hostban.fail2ban"):
        ban(admin, "203.0.113.7")
    assert any("security log" in record.getMessage() for record in caplog.records)
    assert not log_file.exists()

    log_file.parent.mkdir()
    hs.heal_job(station.app.station)
    assert events(log_file) == [("ban", "203.0.113.7")]


def test_concurrent_writers_log_each_ban_once(station: Station, tmp_path: Path) -> None:
    the_station = station.app.station
    now = station.clock()
    addresses = [f"203.0.113.{n}" for n in range(1, 41)]
    with begin_write(the_station.engine) as conn:
        for address in addresses:
            service.create_filter(
                conn,
                NewFilter(value=address, reason="test"),
                now=now,
                requester_ip=ADMIN_IP,
                confirm_lockout=False,
            )
    log_file = tmp_path / "security.log"
    written: list[int] = []
    start = threading.Barrier(6)

    def writer() -> None:
        start.wait()
        written.append(hostban_log.sync(the_station.engine, now, str(log_file), True))

    threads = [threading.Thread(target=writer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sum(written) == len(addresses)
    assert sorted(events(log_file)) == sorted(("ban", address) for address in addresses)


def test_filter_matches_ban_lines_only(tmp_path: Path) -> None:
    if shutil.which("fail2ban-regex") is None:
        message = "fail2ban-regex is missing: run scripts/install-test-deps.sh"
        if pg_required():
            pytest.fail(message)
        pytest.skip(message)
    now = datetime.now(UTC)  # fail2ban compares line times with the host clock
    injected = "x\n2026-11-21T16:23:31+00:00 alertstation ban 198.51.100.99 source=manual"
    log_file = tmp_path / "security.log"
    hostban_log.append_lines(
        str(log_file),
        [
            hostban_log.format_line(now, "ban", "203.0.113.7", "manual", injected),
            hostban_log.format_line(now, "unban", "203.0.113.8", "manual"),
            hostban_log.format_line(now, "ban", "2001:db8::7", "flood"),
            "alertstation ban 198.51.100.98 source=manual\n",  # no timestamp: not ours
        ],
    )
    filter_file = tmp_path / "alertstation.conf"
    filter_file.write_text(hs.FILTER_FILE_TEXT)
    done = subprocess.run(
        ["fail2ban-regex", "-o", "ip", str(log_file), str(filter_file)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["203.0.113.7", "2001:db8::7"]
