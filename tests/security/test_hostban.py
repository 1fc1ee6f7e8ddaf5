"""Host firewall bridge without a daemon: parsing, settings, validation, access, pending counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from alertstation.security.hostban import service as hs
from alertstation.security.hostban.fail2ban import (
    DaemonError,
    Fail2ban,
    check_address,
    error_text,
    is_mirrorable,
    parse_banned,
    parse_jail_list,
    sudo_refusal,
)
from alertstation.worker.jobs import JOBS
from tests.security.conftest import ADMIN_IP
from tests.support import SignedIn
from tests.support import StationHarness as Station


def offline_settings(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """Settings that point at a throwaway directory and a socket no daemon listens on."""
    conf = tmp_path / "f2b"
    return {
        "config_dir": str(conf),
        "jail_file": str(conf / "jail.d" / "alertstation.conf"),
        "filter_file": str(conf / "filter.d" / "alertstation.conf"),
        "socket_path": str(tmp_path / "none.sock"),
        "log_file": str(tmp_path / "security.log"),
        **extra,
    }


def test_parsers_and_mirrorable_subset() -> None:
    status = "Status\n|- Number of jail:\t2\n`- Jail list:\tsshd, alertstation\n"
    assert parse_jail_list(status) == ["sshd", "alertstation"]
    assert parse_jail_list("Status\n") == []
    assert parse_banned("['203.0.113.5', '2001:db8::1']\n") == ["2001:db8::1", "203.0.113.5"]
    assert parse_banned("[]\n") == [] and parse_banned("") == []
    with pytest.raises(DaemonError):
        parse_banned("Server replied: pong")
    log = (
        "2026-11-21 15:23:18,270 fail2ban.jailreader     [24454]: ERROR   Unable to read the "
        "filter 'x'\n2026-11-21 15:23:18,270 fail2ban.configreader [1]: WARNING 'a' not defined"
    )
    assert error_text(log) == "Unable to read the filter 'x'"
    assert error_text("Sorry but the jail 'nojail' does not exist\n") == (
        "Sorry but the jail 'nojail' does not exist"
    )
    assert is_mirrorable("203.0.113.7") and is_mirrorable("2001:db8::7")
    for value in ("192.0.2.0/24", "127.0.0.1", "::1", "0.0.0.0", "224.0.0.1", "fe80::1", "x"):
        assert not is_mirrorable(value), value
    assert check_address(" 2001:DB8::1 ") == "2001:db8::1"
    with pytest.raises(ValueError):
        check_address("203.0.113.7; rm -rf /")
    assert sudo_refusal("x\nsudo: a password is required\n") == "sudo: a password is required"
    denied = "Sorry, user svc is not allowed to execute '/usr/bin/fail2ban-client' as root on h."
    assert sudo_refusal(denied) == denied
    assert sudo_refusal("sudo: /usr/local/libexec/x: command not found") is not None
    assert sudo_refusal("sudo: unable to resolve host h: Name or service not known") is None
    assert sudo_refusal(log) is None


def test_client_reports_missing_daemon_without_raising_on_ping(tmp_path: Path) -> None:
    daemon = Fail2ban(socket_path=str(tmp_path / "none.sock"), config_dir=str(tmp_path))
    assert daemon.ping() is False
    with pytest.raises(DaemonError):
        daemon.jails()
    with pytest.raises(ValueError):
        daemon.ban("bad jail", ["203.0.113.7"])
    with pytest.raises(ValueError):
        daemon.control("kill")
    missing = Fail2ban(socket_path="/x", config_dir="/x", client="no-such-fail2ban-client")
    with pytest.raises(DaemonError, match="not installed"):
        missing.run("ping")


def test_self_heal_job_is_registered() -> None:
    assert any(job.name == "hostban-self-heal" and job.interval == 60.0 for job in JOBS)


def test_routes_are_admin_only(station: Station) -> None:
    station.add_user("viewer", "viewer")
    viewer = station.sign_in("viewer")
    assert viewer.request("GET", "/admin/hostban/status").status_code == 403
    denied = viewer.request("POST", "/admin/hostban/resync")
    assert denied.status_code == 403
    routes = [r for r in station.app.registry if r.path.startswith("/admin/hostban/")]
    assert {(r.method, r.path) for r in routes} == {
        ("GET", "/admin/hostban/status"),
        ("POST", "/admin/hostban/configure"),
        ("POST", "/admin/hostban/resync"),
        ("POST", "/admin/hostban/service"),
        ("POST", "/admin/hostban/ssh-unban"),
    }
    assert all(str(r.access) == "role:admin" for r in routes)


def test_settings_default_save_validate_and_audit(
    station: Station, admin: SignedIn, tmp_path: Path, audit_rows: Any, engine: Engine
) -> None:
    with engine.connect() as conn:
        defaults = hs.load_settings(conn)
    assert defaults.mirror_enabled is False and defaults.ssh_ban_seconds == 3600
    assert defaults.jail_file == "/etc/fail2ban/jail.d/alertstation.conf"
    assert defaults.socket_path == "/var/run/fail2ban/fail2ban.sock"
    assert defaults.log_file == "/var/log/alertstation-security.log"

    body = offline_settings(tmp_path, mirror_enabled=True, ssh_ban_seconds=600, apply=False)
    saved = admin.request("POST", "/admin/hostban/configure", json=body)
    assert saved.status_code == 200, saved.text
    assert saved.json["applied"] is False and saved.json["settings"]["mirror_enabled"] is True
    assert "mirror_enabled" in saved.json["changed"] and "ssh_ban_seconds" in saved.json["changed"]
    again = admin.request("POST", "/admin/hostban/configure", json={"apply": False})
    assert again.json["changed"] == [] and again.json["settings"]["ssh_ban_seconds"] == 600
    [row] = [row for row in audit_rows() if row["action"] == "config.updated"][:1]
    assert "hostban" in str(row)

    for bad in (
        {"ssh_ban_seconds": 5},
        {"ssh_ban_seconds": "60"},
        {"mirror_enabled": "yes"},
        {"app_jail": "a b"},
        {"jail_file": "relative/path"},
        {"log_file": "/var/log/../../etc/passwd"},
        {"log_file": "/var/log/a b.log"},
        {"sudo_mode": "sometimes"},
        {"nonsense": 1},
        {"apply": "no"},
    ):
        answer = admin.request("POST", "/admin/hostban/configure", json=bad)
        assert answer.status_code == 422, (bad, answer.text)


def test_ban_never_fails_when_daemon_is_down_and_status_counts_pending(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    body = offline_settings(tmp_path, mirror_enabled=True, apply=False)
    assert admin.request("POST", "/admin/hostban/configure", json=body).status_code == 200
    for value in ("203.0.113.7", "2001:db8::9", "192.0.2.0/24", "127.0.0.2"):
        added = admin.request(
            "POST", "/security/ip-filters", json={"value": value}, remote_addr=ADMIN_IP
        )
        assert added.status_code == 201, added.text
    status = admin.request("GET", "/admin/hostban/status")
    assert status.status_code == 200, status.text
    report = status.json
    assert report["service"]["running"] is False and report["mirror_enabled"] is True
    assert report["mirrorable"] == 2 and report["mirrored"] == 0
    assert report["firewall_pending"] == 2 and report["enforcement"] is False
    assert report["sync_error"] and report["actuator_error"]

    down = admin.request("POST", "/admin/hostban/service", json={"action": "restart"})
    assert down.status_code == 502 and down.json["error"]["code"] == "actuator_error"
    wrong = admin.request("POST", "/admin/hostban/service", json={"action": "kill"})
    assert wrong.status_code == 422
    bad_ip = admin.request("POST", "/admin/hostban/ssh-unban", json={"ip": "1.2.3.4 -x"})
    assert bad_ip.status_code == 422


def test_denied_privileged_write_asks_for_the_update_script(
    station: Station, admin: SignedIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, *args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refuse)
    answer = admin.request("POST", "/admin/hostban/configure", json=offline_settings(tmp_path))
    assert answer.status_code == 500, answer.text
    error = answer.json["error"]
    assert error["code"] == "privilege_denied"
    assert "update script" in error["message"] and "privilege rules" in error["message"]
    assert "scripts/update-privileges.sh --user " in error["message"]


def test_jail_file_is_permanent_and_carries_the_ssh_jail() -> None:
    settings = hs.HostbanSettings(
        **{**hs.DEFAULTS, "ssh_jail_enabled": True, "ssh_ban_seconds": 900}  # type: ignore[arg-type]
    )
    text = hs.jail_file_text(settings)
    assert "[alertstation]\nenabled = true\nfilter = alertstation\n" in text
    assert "bantime = -1" in text and "logpath = /var/log/alertstation-security.log" in text
    assert "[sshd]\nenabled = true\nbantime = 900\n" in text
