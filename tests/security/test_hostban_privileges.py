"""Privilege rules of the host firewall bridge: the update script, the root helper, sudo refusals.

The update script installs into a temporary root (``--dest-root``); the machine's sudoers are
never touched. Refusals are real: a forked child drops to ``nobody`` and meets a read-only
directory or ``sudo -n`` without rules; the HTTP test asks sudo for the helper, which this
machine has not deployed.
"""

from __future__ import annotations

import fnmatch
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from alertstation.security.hostban import service as hs
from alertstation.security.hostban.fail2ban import HELPER, UPDATE_SCRIPT, Fail2ban, PrivilegeError
from tests.security.test_hostban import offline_settings
from tests.support import SignedIn, pg_required
from tests.support import StationHarness as Station

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "update-privileges.sh"
SUDOERS = Path("etc/sudoers.d/alertstation-hostban")
NOBODY = pwd.getpwnam("nobody")


def require(program: str) -> str:
    """Return the program's path; fail under CI (PostgreSQL required), else skip, when missing."""
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")
    if found is None:
        message = f"{program} is missing: run scripts/install-test-deps.sh"
        if pg_required():
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(autouse=True)
def _as_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("installing privilege rules and dropping to nobody needs root")


def run_script(*args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the update script (as ``user`` through setpriv when given)."""
    command = ["bash", str(SCRIPT), *args]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *command]
    return subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False
    )


def as_nobody(work: Callable[[], str]) -> str:
    """Run ``work`` in a forked child that dropped to nobody; return its answer."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        answer = "child failed"
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY.pw_gid)
            os.setuid(NOBODY.pw_uid)
            answer = work()
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            answer = f"unexpected {type(error).__name__}: {error}"
        finally:
            os.write(write, answer.encode())
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


@pytest.fixture
def paths(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Script options whose files live in a root-owned temporary tree."""
    conf = tmp_path / "fail2ban"
    logs = tmp_path / "log"
    logs.mkdir()
    yield {
        "--socket": str(tmp_path / "run" / "f2b.sock"),
        "--config-dir": str(conf),
        "--jail-file": str(conf / "jail.d" / "alertstation.conf"),
        "--filter-file": str(conf / "filter.d" / "alertstation.conf"),
        "--log-file": str(logs / "security.log"),
    }


def options(paths: dict[str, str], dest: Path) -> list[str]:
    """Return the script arguments for user nobody, these paths and this destination root."""
    flat = [item for pair in paths.items() for item in pair]
    return ["--user", "nobody", "--dest-root", str(dest), *flat]


def settings_for(paths: dict[str, str], **extra: Any) -> hs.HostbanSettings:
    """Return the host-ban settings that match the script options."""
    base = hs.HostbanSettings(**hs.DEFAULTS)  # type: ignore[arg-type]
    return replace(
        base,
        socket_path=paths["--socket"],
        config_dir=paths["--config-dir"],
        jail_file=paths["--jail-file"],
        filter_file=paths["--filter-file"],
        log_file=paths["--log-file"],
        **extra,
    )


def test_dry_run_shows_the_rules_validates_them_and_installs_nothing(tmp_path: Path) -> None:
    require("visudo")
    dest = tmp_path / "root"
    done = run_script("--user", "nobody", "--dry-run", "--dest-root", str(dest))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("dry run: nothing is changed\nvisudo: the drop-in parses OK\n")
    assert f"would install {dest}/{SUDOERS} (0440 root:root):" in out
    assert f"would install {dest}{HELPER} (0755 root:root)" in out
    assert "  | nobody ALL = (root) NOPASSWD: ALERTSTATION_F2B_QUERY" in out
    assert (
        "/usr/bin/fail2ban-client -s /var/run/fail2ban/fail2ban.sock set alertstation banip *"
        in out
    )
    assert not dest.exists()

    as_user = run_script("--user", "nobody", "--dry-run", user="nobody")
    assert as_user.returncode == 0, as_user.stderr
    assert "would create /var/log/alertstation-security.log" in as_user.stdout


def test_script_refuses_non_root_and_bad_values(tmp_path: Path) -> None:
    refused = run_script("--user", "nobody", "--dest-root", str(tmp_path), user="nobody")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "must run as root" in refused.stderr and "sudo" in refused.stderr
    assert list(tmp_path.iterdir()) == []
    for bad in (
        ["--user", "no-such-user-here"],
        ["--user", "root"],
        ["--user", "nobody", "--log-file", "/var/log/a b.log"],
        ["--user", "nobody", "--jail-file", "/etc/fail2ban/../passwd"],
        ["--user", "nobody", "--app-jail", "x,ALL"],
        ["--user", "nobody", "--socket", "relative.sock"],
        ["--user", "nobody", "--frobnicate"],
    ):
        done = run_script(*bad, "--dry-run")
        assert done.returncode == 1, (bad, done.stdout)
        assert done.stderr.startswith("update-privileges.sh: "), bad


def test_install_is_idempotent_and_visudo_accepts_the_drop_in(
    tmp_path: Path, paths: dict[str, str]
) -> None:
    visudo = require("visudo")
    dest = tmp_path / "root"
    first = run_script(*options(paths, dest))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        f"helper: installed ({dest}{HELPER})",
        f"sudoers drop-in: installed ({dest}/{SUDOERS})",
        "privilege rules for nobody are in place",
    ]
    drop_in = dest / SUDOERS
    helper = Path(f"{dest}{HELPER}")
    assert stat.S_IMODE(drop_in.stat().st_mode) == 0o440 and drop_in.stat().st_uid == 0
    assert stat.S_IMODE(helper.stat().st_mode) == 0o755 and helper.stat().st_uid == 0
    checked = subprocess.run(
        [visudo, "-c", "-f", str(drop_in)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    before = {path: (path.stat().st_ino, path.read_bytes()) for path in (drop_in, helper)}

    second = run_script(*options(paths, dest))
    assert second.returncode == 0, second.stderr
    assert "helper: unchanged" in second.stdout and "sudoers drop-in: unchanged" in second.stdout
    assert {path: (path.stat().st_ino, path.read_bytes()) for path in before} == before

    os.chmod(drop_in, 0o644)  # drift is repaired
    third = run_script(*options(paths, dest))
    assert "sudoers drop-in: installed" in third.stdout
    assert stat.S_IMODE(drop_in.stat().st_mode) == 0o440


def _rules(drop_in: Path) -> list[str]:
    """Return the command patterns of the drop-in's Cmnd_Alias lines."""
    text = drop_in.read_text().replace("\\\n", " ")
    rules: list[str] = []
    for line in text.splitlines():
        if line.startswith("Cmnd_Alias "):
            rules += [" ".join(rule.split()) for rule in line.split("=", 1)[1].split(",")]
    return rules


def _allowed(rules: list[str], argv: list[str]) -> bool:
    """Match one command line as sudo does: the program exactly, the arguments as a glob."""
    program = shutil.which(argv[0]) or argv[0]
    line = " ".join([program, *argv[1:]])
    return any(fnmatch.fnmatchcase(line, rule) for rule in rules)


def test_rules_allow_exactly_the_commands_the_station_runs(
    tmp_path: Path, paths: dict[str, str]
) -> None:
    require("fail2ban-client")
    dest = tmp_path / "root"
    assert run_script(*options(paths, dest)).returncode == 0
    rules = _rules(dest / SUDOERS)
    wildcards = [rule for rule in rules if "*" in rule]
    assert len(wildcards) == 5 and all(rule.endswith(" *") for rule in wildcards)
    assert all(re.search(r" (banip|unbanip|sshd) \*$", rule) for rule in wildcards)

    settings = settings_for(paths, ssh_jail_enabled=True)
    daemon = Fail2ban(socket_path=settings.socket_path, config_dir=settings.config_dir)
    station_commands = [
        daemon.command("ping"),
        daemon.command("status"),
        *(daemon.command("get", jail, "banned") for jail in ("alertstation", "sshd")),
        *(
            daemon.command("set", jail, verb, "203.0.113.7", "2001:db8::7")
            for jail in ("alertstation", "sshd")
            for verb in ("banip", "unbanip")
        ),
        *(daemon.command(action, config=True) for action in ("start", "stop", "restart")),
        daemon.command("reload", config=True),
        daemon.command("--test", config=True),
        *hs.helper_commands(settings),
        *hs.helper_commands(replace(settings, ssh_jail_enabled=False)),
    ]
    for argv in station_commands:
        assert _allowed(rules, argv), argv

    helper = hs.helper_commands(settings)[0]
    other = Fail2ban(socket_path=settings.socket_path, config_dir="/tmp/evil")
    for argv in (
        daemon.command("set", "alertstation", "addaction", "evil"),
        daemon.command("set", "alertstation", "action", "noop", "actionban", "id"),
        daemon.command("set", "recidive", "banip", "203.0.113.7"),
        daemon.command("get", "alertstation", "banned", "-c", "/tmp/evil"),
        daemon.command("flushlogs"),
        other.command("start", config=True),
        [HELPER, "filter", "/etc/passwd"],
        [HELPER, "log", "/etc/shadow"],
        [HELPER, "jail", "/etc/passwd", *helper[3:]],
        ["/bin/sh", "-c", "id"],
    ):
        assert not _allowed(rules, argv), argv


def test_helper_writes_what_the_station_writes_and_refuses_other_paths(
    tmp_path: Path, paths: dict[str, str]
) -> None:
    dest = tmp_path / "root"
    assert run_script(*options(paths, dest)).returncode == 0
    helper = f"{dest}{HELPER}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [helper, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )

    for ssh in (False, True):
        settings = settings_for(paths, ssh_jail_enabled=ssh, ssh_ban_seconds=900)
        for command in hs.helper_commands(settings):
            done = run(*command[1:])
            assert done.returncode == 0, (command, done.stderr)
        assert Path(settings.jail_file).read_text() == hs.jail_file_text(settings)
        assert Path(settings.filter_file).read_text() == hs.FILTER_FILE_TEXT
        assert stat.S_IMODE(os.stat(settings.jail_file).st_mode) == 0o644
    log = Path(paths["--log-file"])
    assert log.stat().st_uid == NOBODY.pw_uid and stat.S_IMODE(log.stat().st_mode) == 0o640
    assert list(Path(paths["--jail-file"]).parent.glob(".alertstation.*")) == []

    settings = settings_for(paths, ssh_jail_enabled=True)
    jail = hs.helper_commands(settings)[0][1:]
    for bad in (
        ["filter", "/etc/passwd"],
        ["log", str(tmp_path / "other.log")],
        [jail[0], "/tmp/x.conf", *jail[2:]],
        [*jail[:6], "59"],
        [*jail[:6], "0900"],
        [*jail[:6], "9; id"],
        [*jail[:5], "recidive", "600"],
    ):
        done = run(*bad)
        assert done.returncode == 3, (bad, done.stderr)
        assert "scripts/update-privileges.sh" in done.stderr
    assert run("nonsense").returncode == 2

    log.unlink()
    log.symlink_to(tmp_path / "elsewhere")
    assert run("log", str(log)).returncode == 3 and not (tmp_path / "elsewhere").exists()
    log.unlink()
    Path(paths["--log-file"]).parent.chmod(0o777)
    assert run("log", str(log)).returncode == 3, "a directory anyone may write is refused"

    with open(helper, "rb") as script:  # opened by root: nobody cannot reach pytest's tree
        refused = as_nobody(
            lambda: str(
                subprocess.run(
                    ["sh", "-s", "filter", paths["--filter-file"]],
                    stdin=script,
                    capture_output=True,
                    check=False,
                ).returncode
            )
        )
    assert refused == "3", "the helper runs for root only"


def test_sudo_without_rules_raises_privilege_error_naming_the_script(tmp_path: Path) -> None:
    require("sudo")
    daemon = Fail2ban(socket_path=str(tmp_path / "f2b.sock"), config_dir=str(tmp_path), sudo=True)

    def ping() -> str:
        try:
            daemon.run("ping")
        except PrivilegeError as error:
            return f"PrivilegeError: {error}"
        return "allowed"

    answer = as_nobody(ping)
    assert answer.startswith("PrivilegeError: sudo: a password is required"), answer
    assert UPDATE_SCRIPT in answer


@pytest.fixture
def locked() -> Iterator[Path]:
    """A directory nobody may enter but not write (root's, 0755, outside pytest's 0700 tree)."""
    directory = Path(tempfile.mkdtemp(prefix="hostban-locked-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_denied_write_as_non_root_names_the_script(locked: Path) -> None:

    def write() -> str:
        try:
            hs._write(str(locked / "jail.conf"), "[x]\n")
        except hs.PrivilegeDenied as error:
            return f"PrivilegeDenied: {error.message}"
        return "written"

    answer = as_nobody(write)
    assert answer.startswith("PrivilegeDenied: The station was not allowed to write "), answer
    assert f"{UPDATE_SCRIPT} --user nobody" in answer
    assert not (locked / "jail.conf").exists()
    settings = hs.HostbanSettings(**hs.DEFAULTS)  # type: ignore[arg-type]
    assert as_nobody(lambda: str(settings.uses_sudo())) == "True"
    assert replace(settings, sudo_mode="never").uses_sudo() is False
    assert replace(settings, sudo_mode="always").uses_sudo() is True
    assert settings.uses_sudo() is False, "root runs its commands directly"


def test_route_answers_privilege_denied_when_the_rules_are_missing(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    body = offline_settings(tmp_path, sudo_mode="always")
    answer = admin.request("POST", "/admin/hostban/configure", json=body)
    assert answer.status_code == 500, answer.text
    error = answer.json["error"]
    assert error["code"] == "privilege_denied"
    assert "Redeploy the privilege rules by running the update script" in error["message"]
    assert f"{UPDATE_SCRIPT} --user " in error["message"]
    assert error["details"]["update_script"] == UPDATE_SCRIPT
    assert error["details"]["detail"]
    assert not Path(body["jail_file"]).exists(), "nothing was written without the helper"

    status = admin.request("GET", "/admin/hostban/status")
    assert status.status_code == 200 and status.json["sudo"] is True
    assert status.json["settings"]["sudo_mode"] == "always"
    bad = admin.request("POST", "/admin/hostban/configure", json={"sudo_mode": "sometimes"})
    assert bad.status_code == 422
