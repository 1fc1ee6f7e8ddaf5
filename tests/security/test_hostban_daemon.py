"""Host firewall bridge against a real ``fail2ban-server`` in a throwaway directory.

The daemon gets its own config directory, socket, pid file and log under temporary paths and a
no-op ban action (``actionban``/``actionunban`` are ``true``), so no packet filter is touched and
the machine's /etc/fail2ban is never read for writing. Teardown stops the daemon even on failure.

The dedicated jail also reads the security log (polling, from its end). A test that lifts a ban
right after logging it first waits until the daemon has read and processed the ban line
(``wait_read``), or the late read could ban the address again until the next self-heal.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from alertstation.security.bans.tables import ip_filters
from alertstation.security.hostban import service as hs
from alertstation.security.hostban.fail2ban import parse_banned
from tests.security.conftest import ADMIN_IP
from tests.support import SignedIn, pg_required
from tests.support import StationHarness as Station

APP_JAIL = "alertstation"
SSH_JAIL = "sshd"

CLIENT_TIMEOUT = 90.0


@dataclass
class Daemon:
    """A throwaway fail2ban daemon: its paths and a way to ask it things."""

    conf: Path
    socket: str
    pid_file: Path
    log_file: Path
    server_log: Path
    sentinels: int = 0  # sentinel log lines written so far (``wait_read``)

    def client(self, *args: str, config: bool = False, check: bool = True) -> str:
        # A loaded CI machine (or the year-ahead run) can keep the daemon busy reloading a jail
        # for tens of seconds: the same generous deadline as the waits below.
        """Run fail2ban-client against this daemon and return its output."""
        command = ["fail2ban-client", *(["-c", str(self.conf)] if config else [])]
        done = subprocess.run(
            [*command, "-s", self.socket, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"fail2ban-client {args}: {done.stderr}{done.stdout}")
        return done.stdout

    def banned(self, jail: str) -> list[str]:
        """Return the jail's banned list as the daemon reports it."""
        return parse_banned(self.client("get", jail, "banned"))

    def wait_read(self, *addresses: str, timeout: float = 90.0) -> None:
        """Wait until the jail has read the log line of each address and acted on every ticket
        its filter made so far, so no late ban is left to happen.

        The station's ``banip`` acts before its client call returns; the filter's tickets are
        acted on later by the jail's action thread, in the order the lines were read, and a
        ticket for an address just banned may be merged without a line of its own. So after each
        address's ``Found``, a sentinel ban line is appended to the log and the wait goes on
        until the jail has banned the sentinel and ended that round ("Banned ... ticket(s)"):
        every ticket before it has then been acted on. The sentinel is unbanned again.
        """
        self.sentinels += 1
        sentinel = f"198.51.100.{200 + self.sentinels}"
        self._wait_log(
            [rf"\[{APP_JAIL}\] Found {re.escape(address)} " for address in addresses], timeout
        )
        moment = datetime.now(UTC).isoformat(timespec="milliseconds")
        with self.log_file.open("a") as log:
            log.write(f"{moment} alertstation ban {sentinel} source=manual\n")
        ip = re.escape(sentinel)
        self._wait_log(
            [rf"\[{APP_JAIL}\] Found {ip} (?s:.*)\[{APP_JAIL}\] Ban {ip}(?s:.*)"
             rf"Banned \d+ / \d+, \d+ ticket\(s\) in '{APP_JAIL}'"],
            timeout,
        )  # fmt: skip
        self.client("set", APP_JAIL, "unbanip", sentinel)

    def _wait_log(self, patterns: list[str], timeout: float) -> None:
        """Wait until every pattern is found in the daemon's own log."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.server_log.read_text() if self.server_log.exists() else ""
            missing = [pattern for pattern in patterns if re.search(pattern, text) is None]
            if not missing:
                return
            if time.monotonic() > deadline:
                tail = "\n".join(text.splitlines()[-40:])
                raise AssertionError(
                    f"the jail's log never showed {missing}; server log ends:\n{tail}"
                )
            time.sleep(0.2)

    def wait_banned(self, jail: str, address: str, timeout: float = 90.0) -> list[str]:
        """Wait until ``address`` is in the jail's banned list; return the list."""
        deadline = time.monotonic() + timeout
        while True:
            banned = self.banned(jail)
            if address in banned:
                return banned
            if time.monotonic() > deadline:
                raise AssertionError(f"{address} never reached {jail}: {banned}")
            time.sleep(0.2)

    def settings(self, **extra: Any) -> dict[str, Any]:
        """Return the host-ban settings that point the station at this daemon."""
        return {
            "config_dir": str(self.conf),
            "jail_file": str(self.conf / "jail.d" / "alertstation.conf"),
            "filter_file": str(self.conf / "filter.d" / "alertstation.conf"),
            "socket_path": self.socket,
            "log_file": str(self.log_file),
            **extra,
        }

    def stop(self) -> None:
        """Stop the daemon; kill it by its pid file when it does not stop in time."""
        self.client("stop", config=True, check=False)
        deadline = time.monotonic() + 10
        while self.pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.pid_file.exists():
            try:
                os.kill(int(self.pid_file.read_text().strip()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass


def _write_config(conf: Path, run_dir: Path, tmp_path: Path) -> None:
    for name in ("jail.d", "filter.d", "action.d"):
        (conf / name).mkdir(parents=True)
    (conf / "fail2ban.conf").write_text(
        "[Definition]\nloglevel = DEBUG\n"
        f"logtarget = {tmp_path / 'fail2ban.log'}\n"
        f"socket = {run_dir / 'f2b.sock'}\npidfile = {run_dir / 'f2b.pid'}\n"
        "dbfile = :memory:\n"
    )
    auth_log = tmp_path / "auth.log"
    auth_log.touch()
    (conf / "jail.conf").write_text(
        "[DEFAULT]\nbanaction = noop\naction = noop\nbackend = polling\n\n"
        f"[{SSH_JAIL}]\nenabled = false\nfilter = sshd-test\nlogpath = {auth_log}\n"
    )
    (conf / "action.d" / "noop.conf").write_text(
        "[Definition]\nactionstart =\nactionstop =\nactioncheck =\n"
        "actionban = true\nactionunban = true\n"
    )
    (conf / "filter.d" / "sshd-test.conf").write_text(
        "[Definition]\nfailregex = ^sshd failure from <HOST>$\n"
    )


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A configured (not yet started) throwaway fail2ban; always stopped afterwards."""
    if shutil.which("fail2ban-server") is None:
        message = "fail2ban-server is missing: run scripts/install-test-deps.sh"
        if pg_required():
            pytest.fail(message)
        pytest.skip(message)
    run_dir = Path(tempfile.mkdtemp(prefix="f2b-"))  # unix socket paths must stay short
    conf = tmp_path / "fail2ban"
    _write_config(conf, run_dir, tmp_path)
    found = Daemon(
        conf,
        str(run_dir / "f2b.sock"),
        run_dir / "f2b.pid",
        tmp_path / "sec.log",
        tmp_path / "fail2ban.log",
    )
    try:
        yield found
    finally:
        found.stop()
        shutil.rmtree(run_dir, ignore_errors=True)


def ban(who: SignedIn, value: str, **extra: Any) -> dict[str, Any]:
    """Add a blocklist entry through the API and return it."""
    answer = who.request(
        "POST", "/security/ip-filters", json={"value": value, **extra}, remote_addr=ADMIN_IP
    )
    assert answer.status_code == 201, answer.text
    return answer.json["filter"]


def configure(who: SignedIn, daemon: Daemon, **extra: Any) -> Any:
    """Save and apply settings that point at the throwaway daemon."""
    return who.request("POST", "/admin/hostban/configure", json=daemon.settings(**extra))


def test_ban_mirrored_unban_removed_restart_repushed(
    station: Station, admin: SignedIn, daemon: Daemon
) -> None:
    applied = configure(admin, daemon, mirror_enabled=True)
    assert applied.status_code == 200, applied.text
    assert applied.json["applied"] is True
    assert daemon.log_file.exists(), "apply creates the security log"
    assert daemon.client("get", APP_JAIL, "bantime").strip() == "-1"

    entry = ban(admin, "203.0.113.7")
    assert daemon.banned(APP_JAIL) == ["203.0.113.7"]
    ban(admin, "192.0.2.0/24")
    ban(admin, "127.0.0.5")
    ban(admin, "2001:db8::44", duration_minutes=5)
    assert daemon.banned(APP_JAIL) == ["2001:db8::44", "203.0.113.7"]
    daemon.wait_read("203.0.113.7", "2001:db8::44")

    station.clock.advance(minutes=10)  # the IPv6 entry expires and leaves the jail
    status = admin.request("GET", "/admin/hostban/status").json
    assert status["service"]["running"] is True and status["jail"]["loaded"] is True
    assert status["mirrored"] == 1 and status["firewall_pending"] == 0
    assert status["actuator_error"] is None and status["enforcement"] is True
    assert daemon.banned(APP_JAIL) == ["203.0.113.7"]

    path = f"/security/ip-filters/{entry['id']}"
    off = admin.request("PATCH", path, json={"active": False}, remote_addr=ADMIN_IP)
    assert off.status_code == 200 and daemon.banned(APP_JAIL) == []
    on = admin.request("PATCH", path, json={"active": True}, remote_addr=ADMIN_IP)
    assert on.status_code == 200 and daemon.banned(APP_JAIL) == ["203.0.113.7"]

    restarted = admin.request("POST", "/admin/hostban/service", json={"action": "restart"})
    assert restarted.status_code == 200, restarted.text
    assert restarted.json["sync"]["mirrored"] == 1
    assert daemon.banned(APP_JAIL) == ["203.0.113.7"]

    # A restart behind the station's back flushes the jail; the worker's self-heal re-pushes.
    daemon.client("restart", config=True)
    assert daemon.banned(APP_JAIL) == []
    pending = admin.request("GET", "/admin/hostban/status").json
    assert pending["mirrored"] == 1 and daemon.banned(APP_JAIL) == ["203.0.113.7"]
    daemon.client("restart", config=True)
    hs.heal_job(station.app.station)
    assert daemon.banned(APP_JAIL) == ["203.0.113.7"]

    stopped = admin.request("POST", "/admin/hostban/service", json={"action": "stop"})
    assert stopped.status_code == 200
    removed = admin.request("DELETE", path, remote_addr=ADMIN_IP)
    assert removed.status_code == 200, "a ban list change never fails while the daemon is down"
    ban(admin, "203.0.113.8")
    down = admin.request("GET", "/admin/hostban/status").json
    assert down["service"]["running"] is False and down["firewall_pending"] == 1

    started = admin.request("POST", "/admin/hostban/service", json={"action": "start"})
    assert started.status_code == 200 and started.json["sync"]["firewall_pending"] == 0
    assert daemon.banned(APP_JAIL) == ["203.0.113.8"]
    resync = admin.request("POST", "/admin/hostban/resync")
    assert resync.status_code == 200 and resync.json["sync"]["mirrored"] == 1


def test_ssh_import_and_reapply(
    station: Station, admin: SignedIn, daemon: Daemon, engine: Engine
) -> None:
    applied = configure(admin, daemon, ssh_jail_enabled=True, ssh_ban_seconds=600)
    assert applied.status_code == 200, applied.text
    assert daemon.client("get", SSH_JAIL, "bantime").strip() == "600"
    daemon.client("set", SSH_JAIL, "banip", "203.0.113.50", "2001:db8::50")
    imported_at = station.clock()

    resync = admin.request("POST", "/admin/hostban/resync")
    assert resync.status_code == 200, resync.text
    query = select(ip_filters).order_by(ip_filters.c.value)
    with engine.connect() as conn:
        rows = [row._mapping for row in conn.execute(query)]
    assert [row["value"] for row in rows] == ["2001:db8::50", "203.0.113.50"]
    for row in rows:
        assert row["source"] == "ssh_brute_force" and row["reason"] == "auto_brute_force"
        expires = row["expires_at"].replace(tzinfo=row["expires_at"].tzinfo or UTC)
        assert expires == imported_at + timedelta(seconds=600)
    again = admin.request("POST", "/admin/hostban/resync")
    assert again.status_code == 200
    with engine.connect() as conn:
        assert len(conn.execute(select(ip_filters)).all()) == 2, "an import is not repeated"

    # Loopback is never imported; an expired SSH entry is not re-applied after a restart.
    with engine.connect() as conn:
        settings = hs.load_settings(conn)
    hs.import_ssh_bans(station.app.station, settings)  # nothing new
    ban(admin, "198.18.0.9", source="ssh_brute_force", duration_minutes=1)
    station.clock.advance(minutes=2)
    restarted = admin.request("POST", "/admin/hostban/service", json={"action": "restart"})
    assert restarted.status_code == 200, restarted.text
    assert daemon.banned(SSH_JAIL) == ["2001:db8::50", "203.0.113.50"]

    unban = admin.request("POST", "/admin/hostban/ssh-unban", json={"ip": "203.0.113.50"})
    assert unban.status_code == 200 and unban.json["deactivated"] == 1
    assert daemon.banned(SSH_JAIL) == ["2001:db8::50"]
    admin.request("POST", "/admin/hostban/resync")
    assert daemon.banned(SSH_JAIL) == ["2001:db8::50"], "a lifted ban is not re-applied"


def test_loopback_ssh_ban_is_not_imported(
    station: Station, admin: SignedIn, daemon: Daemon, engine: Engine
) -> None:
    assert configure(admin, daemon, ssh_jail_enabled=True).status_code == 200
    daemon.client("set", SSH_JAIL, "banip", "127.0.0.9")
    assert admin.request("POST", "/admin/hostban/resync").status_code == 200
    with engine.connect() as conn:
        assert conn.execute(select(ip_filters)).all() == []


def test_failed_jail_load_reports_the_daemon_error(
    station: Station, admin: SignedIn, daemon: Daemon
) -> None:
    (daemon.conf / "jail.d" / "zz-broken.conf").write_text(
        f"[{APP_JAIL}]\nfilter = no-such-filter\n"
    )
    failed = configure(admin, daemon, mirror_enabled=True)
    assert failed.status_code == 502, failed.text
    error = failed.json["error"]
    assert error["code"] == "actuator_error"
    assert "Unable to read the filter 'no-such-filter'" in error["details"]["actuator_error"]
    status = admin.request("GET", "/admin/hostban/status").json
    assert status["enforcement"] is False and status["jail"]["loaded"] is False
    assert "no-such-filter" in (status["actuator_error"] or "")


def test_logged_ban_reaches_the_jail_when_banip_is_unavailable(
    station: Station, admin: SignedIn, daemon: Daemon
) -> None:
    applied = configure(admin, daemon, mirror_enabled=True)
    assert applied.status_code == 200, applied.text
    # The station loses the daemon's socket; the jail still reads the security log.
    lost = admin.request(
        "POST",
        "/admin/hostban/configure",
        json={"socket_path": daemon.socket + ".gone", "apply": False},
    )
    assert lost.status_code == 200, lost.text
    injected = "spam\n2026-11-21T00:00:00+00:00 alertstation ban 198.51.100.99 source=manual"
    ban(admin, "203.0.113.77", reason=injected)
    ban(admin, "192.0.2.0/24")
    ban(admin, "127.0.0.7")
    status = admin.request("GET", "/admin/hostban/status").json
    assert status["firewall_pending"] == 1 and status["sync_error"]

    assert daemon.wait_banned(APP_JAIL, "203.0.113.77") == ["203.0.113.77"]
    time.sleep(2)  # a few more polls: nothing else in the log may ban
    assert daemon.banned(APP_JAIL) == ["203.0.113.77"]
    assert "198.51.100.99" not in daemon.server_log.read_text()


def test_mirror_off_empties_the_jail_at_once_and_on_repushes(
    station: Station, admin: SignedIn, daemon: Daemon, engine: Engine
) -> None:
    assert configure(admin, daemon, mirror_enabled=True).status_code == 200
    ban(admin, "203.0.113.7")
    ban(admin, "2001:db8::7")
    assert daemon.banned(APP_JAIL) == ["2001:db8::7", "203.0.113.7"]
    daemon.wait_read("203.0.113.7", "2001:db8::7")

    off = admin.request(
        "POST", "/admin/hostban/configure", json={"mirror_enabled": False, "apply": False}
    )
    assert off.status_code == 200, off.text
    assert off.json["sync"]["mirrored"] == 0 and off.json["sync"]["sync_error"] is None
    assert daemon.banned(APP_JAIL) == []
    ban(admin, "203.0.113.8")
    assert daemon.banned(APP_JAIL) == [], "nothing is mirrored while the toggle is off"
    status = admin.request("GET", "/admin/hostban/status").json
    assert status["jail"]["loaded"] is True and status["enforcement"] is False
    assert status["mirrored"] == 0 and status["firewall_pending"] == 0
    log_text = daemon.log_file.read_text()
    assert "unban 203.0.113.7 " in log_text and "203.0.113.8" not in log_text

    on = admin.request(
        "POST", "/admin/hostban/configure", json={"mirror_enabled": True, "apply": False}
    )
    assert on.status_code == 200, on.text
    assert on.json["sync"]["mirrored"] == 3
    assert daemon.banned(APP_JAIL) == ["2001:db8::7", "203.0.113.7", "203.0.113.8"]

    # Apply with the mirror off also leaves the jail loaded and empty.
    daemon.wait_read("203.0.113.8")
    applied = configure(admin, daemon, mirror_enabled=False)
    assert applied.status_code == 200, applied.text
    assert daemon.banned(APP_JAIL) == []


def test_automatic_ban_and_its_expiry_reach_the_jail(
    station: Station, admin: SignedIn, daemon: Daemon, engine: Engine
) -> None:
    applied = configure(admin, daemon, mirror_enabled=True)
    assert applied.status_code == 200, applied.text
    prober = "203.0.113.66"
    answers = [
        station.client.simulate_get(path, remote_addr=prober).status_code
        for path in ("/wp-login.php", "/.env", "/phpmyadmin/index.php")
    ]
    assert answers[-1] == 403, answers  # the third probe trips the detector and is refused
    with engine.connect() as conn:
        row = conn.execute(select(ip_filters).where(ip_filters.c.value == prober)).one()
    assert row.source == "malicious_request" and row.active
    assert daemon.banned(APP_JAIL) == [prober], "an automatic ban is mirrored like a manual one"
    daemon.wait_read(prober)

    station.clock.advance(days=2)  # past the detector's ban length: expiry lifts it in the jail
    hs.heal_job(station.app.station)
    assert daemon.banned(APP_JAIL) == []
