"""Mirror the ban list to fail2ban, import SSH bans, and save and apply the bridge settings.

Bridge rules (spec, "Host firewall bridge rules"):

1. Application bans are mirrored to a dedicated jail whose ban time is permanent.
2. Only single, routable, non-loopback, active, unexpired addresses are mirrored; ranges and
   loopback stay application-only. ``reconcile`` compares the jail with that subset only.
3. The daemon forgets bans when it restarts, so ``reconcile`` re-pushes after apply, restart and
   resync; SSH-sourced entries are re-applied to the SSH jail (expired and loopback skipped).
4. ``apply`` writes the jail and filter files, ensures the security log exists, restarts the
   daemon and checks that the dedicated jail loaded, else fails with the daemon's own error.
5. ``heal`` (worker, status, resync) runs the SSH import, the SSH re-apply and the reconcile.

Every ban and lift handed to the dedicated jail is also written to the security log
(``hostban_log``), which the jail's filter reads. Turning the mirror off empties the jail and logs
the lifts at once; turning it on re-pushes. When the service is not root (``sudo_mode`` auto),
fail2ban commands run through ``sudo -n`` and the files are written by the root-owned helper the
update script installs; a refusal raises ``PrivilegeDenied`` naming that script.
"""

from __future__ import annotations

import errno
import logging
import os
import pwd
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.db.types import as_utc
from alertstation.errors import AppError, Invalid
from alertstation.http.bodies import check_bool
from alertstation.security.bans import service
from alertstation.security.bans.entries import NewFilter
from alertstation.security.bans.tables import BLOCKLIST, SSH_BRUTE_FORCE, ip_filters
from alertstation.security.hostban import log as hostban_log
from alertstation.security.hostban.fail2ban import (
    HELPER,
    UPDATE_SCRIPT,
    DaemonError,
    Fail2ban,
    PrivilegeError,
    check_jail_name,
    is_mirrorable,
    run_command,
)
from alertstation.security.hostban.tables import DEFAULTS, SUDO_MODES, hostban_settings

if TYPE_CHECKING:
    from alertstation.context import Station

log = logging.getLogger("alertstation.security.hostban.fail2ban")

AUTO_BRUTE_FORCE = "auto_brute_force"
SECTION = "hostban"
MIN_SSH_BAN = 60
MAX_SSH_BAN = 366 * 24 * 3600
PRIVILEGE_MESSAGE = (
    "The station was not allowed to {action}. Redeploy the privilege rules by running the "
    f"update script as root: {UPDATE_SCRIPT} --user {{user}}, then try again."
)
_PATH_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-")


class ActuatorError(AppError):
    """The fail2ban daemon refused a command; ``actuator_error`` carries its own message."""

    status = 502
    code = "actuator_error"


class PrivilegeDenied(AppError):
    """A privileged write was denied: the privilege rules need redeploying."""

    status = 500
    code = "privilege_denied"


def service_user() -> str:
    """Return the name of the user this process runs as (for the update script's --user)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def privilege_denied(action: str, detail: str) -> PrivilegeDenied:
    """Return the error that tells the operator to redeploy the privilege rules."""
    message = PRIVILEGE_MESSAGE.format(action=action, user=service_user())
    return PrivilegeDenied(message, detail=detail, update_script=UPDATE_SCRIPT)


@dataclass(frozen=True)
class HostbanSettings:
    """The bridge settings (one database row, or the defaults when there is none)."""

    mirror_enabled: bool
    ssh_jail_enabled: bool
    ssh_ban_seconds: int
    app_jail: str
    ssh_jail: str
    config_dir: str
    jail_file: str
    filter_file: str
    socket_path: str
    log_file: str
    sudo_mode: str

    def uses_sudo(self) -> bool:
        """Tell whether privileged work runs through ``sudo -n`` (auto: when not root)."""
        if self.sudo_mode == "auto":
            return os.geteuid() != 0
        return self.sudo_mode == "always"

    def daemon(self) -> Fail2ban:
        """Return the client for the configured daemon."""
        return Fail2ban(
            socket_path=self.socket_path, config_dir=self.config_dir, sudo=self.uses_sudo()
        )

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return asdict(self)


NAMES = frozenset(field.name for field in fields(HostbanSettings))
BOOLEANS = frozenset({"mirror_enabled", "ssh_jail_enabled"})
JAILS = frozenset({"app_jail", "ssh_jail"})
PATHS = frozenset({"config_dir", "jail_file", "filter_file", "socket_path", "log_file"})


@dataclass
class SyncReport:
    """What one reconcile found: mirrorable, mirrored and pending counts, and any daemon error."""

    mirrorable: int = 0
    mirrored: int = 0
    firewall_pending: int = 0
    error: str | None = None


# --- settings -------------------------------------------------------------------------------


def load_settings(conn: Connection) -> HostbanSettings:
    """Return the stored settings, or the defaults when none were saved."""
    row = conn.execute(select(hostban_settings).where(hostban_settings.c.id == 1)).first()
    values = dict(DEFAULTS) if row is None else {name: getattr(row, name) for name in NAMES}
    return HostbanSettings(**values)  # type: ignore[arg-type]


def validate_changes(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Check submitted setting fields; Invalid naming the first bad field."""
    unknown = sorted(set(changes) - NAMES)
    if unknown:
        raise Invalid(f"unknown setting {unknown[0]}", field=unknown[0])
    for name, value in changes.items():
        _check_field(name, value)
    return dict(changes)


def _check_field(name: str, value: Any) -> None:
    if name in BOOLEANS:
        check_bool(value, name)
    elif name == "ssh_ban_seconds":
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid("ssh_ban_seconds must be a whole number", field=name)
        if not MIN_SSH_BAN <= value <= MAX_SSH_BAN:
            raise Invalid(
                f"ssh_ban_seconds must be between {MIN_SSH_BAN} and {MAX_SSH_BAN}", field=name
            )
    elif name == "sudo_mode":
        if value not in SUDO_MODES:
            raise Invalid(f"sudo_mode must be one of {', '.join(SUDO_MODES)}", field=name)
    elif name in JAILS:
        try:
            check_jail_name(value if isinstance(value, str) else "")
        except ValueError:
            raise Invalid(
                f"{name} must be a jail name (letters, digits, _.-)", field=name
            ) from None
    else:
        _check_path(name, value)


def _check_path(name: str, value: Any) -> None:
    """Paths reach fail2ban files and the privilege rules: absolute, plain characters, no ``..``."""
    if not (isinstance(value, str) and value.startswith("/") and len(value) <= 255):
        raise Invalid(f"{name} must be an absolute path", field=name)
    if not set(value) <= _PATH_CHARACTERS or ".." in Path(value).parts:
        raise Invalid(f"{name} must be a plain absolute path (letters, digits, ._/-)", field=name)


def save_settings(
    conn: Connection, changes: Mapping[str, Any], now: datetime
) -> tuple[HostbanSettings, list[str]]:
    """Store validated changes; return the new settings and the names that changed.

    A new security log file starts from scratch: the next log write lists every current ban.
    """
    before = load_settings(conn)
    after = replace(before, **validate_changes(changes))
    changed = sorted(name for name in NAMES if getattr(before, name) != getattr(after, name))
    values = {**after.as_dict(), "updated_at": as_utc(now)}
    exists = conn.execute(select(hostban_settings.c.id)).first() is not None
    if exists:
        conn.execute(hostban_settings.update().where(hostban_settings.c.id == 1).values(**values))
    else:
        conn.execute(hostban_settings.insert().values(id=1, **values))
    if "log_file" in changed:
        hostban_log.forget(conn)
    return after, changed


# --- mirroring ------------------------------------------------------------------------------


def mirrorable_addresses(conn: Connection, now: datetime, source: str | None = None) -> set[str]:
    """Return the enforced single, routable, non-loopback blocklist addresses (of one source)."""
    entries = service.enforced_filters(conn, BLOCKLIST, now)
    return {
        entry.value
        for entry in entries
        if is_mirrorable(entry.value) and (source is None or entry.source == source)
    }


def flush_jail(settings: HostbanSettings) -> str | None:
    """Lift every ban of the dedicated jail; return the daemon error (a missing jail is empty)."""
    daemon = settings.daemon()
    try:
        daemon.unban(settings.app_jail, daemon.banned(settings.app_jail))
    except PrivilegeError as error:
        return str(error)
    except DaemonError as error:
        return None if "does not exist" in str(error) else str(error)
    except ValueError as error:
        return str(error)
    return None


def reconcile(
    settings: HostbanSettings, desired: set[str], *, flush_when_off: bool = False
) -> SyncReport:
    """Make the dedicated jail hold exactly ``desired``; never raises for daemon failures.

    While the mirror is off nothing is pushed; with ``flush_when_off`` (explicit operations:
    apply, service start and restart, resync, turning the mirror off) the jail is emptied.
    """
    report = SyncReport(mirrorable=len(desired), firewall_pending=len(desired))
    if not settings.mirror_enabled:
        report.firewall_pending = 0
        if flush_when_off:
            report.error = flush_jail(settings)
        return report
    daemon = settings.daemon()
    try:
        current = set(daemon.banned(settings.app_jail))
        daemon.ban(settings.app_jail, sorted(desired - current))
        daemon.unban(settings.app_jail, sorted(current - desired))
        current = set(daemon.banned(settings.app_jail))
    except (DaemonError, ValueError) as error:
        report.error = str(error)
        return report
    report.mirrored = len(desired & current)
    report.firewall_pending = len(desired - current)
    return report


def reapply_ssh(settings: HostbanSettings, desired: set[str]) -> str | None:
    """Ban SSH-sourced entries missing from the SSH jail; return the daemon error, if any."""
    if not settings.ssh_jail_enabled:
        return None
    daemon = settings.daemon()
    try:
        current = set(daemon.banned(settings.ssh_jail))
        daemon.ban(settings.ssh_jail, sorted(desired - current))
    except (DaemonError, ValueError) as error:
        return str(error)
    return None


def import_ssh_bans(station: Station, settings: HostbanSettings) -> tuple[int, str | None]:
    """Copy the SSH jail's bans into ip_filters; return how many were added and any error."""
    if not settings.ssh_jail_enabled:
        return 0, None
    try:
        banned = settings.daemon().banned(settings.ssh_jail)
    except DaemonError as error:
        return 0, str(error)
    now = station.clock()
    added = 0
    with begin_write(station.engine) as conn:
        query = select(ip_filters.c.value).where(ip_filters.c.kind == BLOCKLIST)
        known_values = set(conn.scalars(query))
        for address in banned:
            if not is_mirrorable(address) or address in known_values:
                continue
            entry = NewFilter(
                value=address,
                expires_at=as_utc(now) + timedelta(seconds=settings.ssh_ban_seconds),
                reason=AUTO_BRUTE_FORCE,
                description=f"Imported from the {settings.ssh_jail} jail",
                source=SSH_BRUTE_FORCE,
            )
            created = service.create_filter(
                conn, entry, now=now, requester_ip="127.0.0.1", confirm_lockout=True
            )
            station.ledger.record(
                conn,
                Actor.system("hostban"),
                "ban.created",
                target=created.value,
                details={"id": created.id, "source": SSH_BRUTE_FORCE, "reason": AUTO_BRUTE_FORCE},
            )
            added += 1
    if added:
        station.bans.clear()
    return added, None


def heal(station: Station, *, flush_when_off: bool = False) -> SyncReport:
    """Run the SSH import, the security log, the SSH re-apply and the jail reconcile."""
    with station.engine.connect() as conn:
        settings = load_settings(conn)
    _, import_error = import_ssh_bans(station, settings)
    now = station.clock()
    hostban_log.sync(station.engine, now, settings.log_file, settings.mirror_enabled)
    with station.engine.connect() as conn:
        desired = mirrorable_addresses(conn, now)
        ssh_desired = mirrorable_addresses(conn, now, SSH_BRUTE_FORCE)
    ssh_error = reapply_ssh(settings, ssh_desired)
    report = reconcile(settings, desired, flush_when_off=flush_when_off)
    report.error = report.error or import_error or ssh_error
    return report


def mirror_change(station: Station) -> SyncReport | None:
    """The after-change step of every ban list edit (manual, automatic, imported); never raises.

    When the mirror is on: write the change to the security log, then make the dedicated jail
    match the mirrorable ban list. When it is off: nothing (None).
    """
    try:
        with station.engine.connect() as conn:
            settings = load_settings(conn)
        if not settings.mirror_enabled:
            return None
        now = station.clock()
        hostban_log.sync(station.engine, now, settings.log_file, True)
        with station.engine.connect() as conn:
            desired = mirrorable_addresses(conn, now)
        report = reconcile(settings, desired)
    except Exception:  # a ban must never fail because the host firewall is unreachable
        log.exception("mirroring the ban list to fail2ban failed")
        return None
    if report.error:
        log.warning("fail2ban mirror pending (%d): %s", report.firewall_pending, report.error)
    return report


def mirror_toggled(station: Station, settings: HostbanSettings) -> SyncReport | None:
    """Right after the mirror toggle changed: on re-pushes, off empties the jail; never raises.

    Turning it off also writes an ``unban`` line for every address the security log holds.
    """
    if settings.mirror_enabled:
        return mirror_change(station)
    try:
        now = station.clock()
        hostban_log.sync(station.engine, now, settings.log_file, False)
        with station.engine.connect() as conn:
            desired = mirrorable_addresses(conn, now)
        report = reconcile(settings, desired, flush_when_off=True)
    except Exception:  # saving the toggle must not fail because the daemon is unreachable
        log.exception("emptying the fail2ban jail failed")
        return None
    if report.error:
        log.warning("fail2ban jail not emptied: %s", report.error)
    return report


def heal_job(station: Station) -> None:
    """Worker job: the self-heal cycle (SSH import, SSH re-apply, jail reconcile)."""
    report = heal(station)
    if report.error:
        log.warning("host firewall self-heal: %s", report.error)


# --- save and apply, service control --------------------------------------------------------


def filter_name(settings: HostbanSettings) -> str:
    """Return the fail2ban filter name of the filter file (its name without ``.conf``)."""
    return Path(settings.filter_file).name.removesuffix(".conf")


def jail_file_text(settings: HostbanSettings) -> str:
    """Return the jail file: the dedicated permanent jail, and the SSH jail when enabled.

    The helper of ``deploy/privileges`` writes the same text when the service is not root.
    The security log is read from its end (``tail``), so a restarted daemon never re-reads old
    ``ban`` lines of addresses lifted since; the re-push restores the current bans instead.
    """
    text = (
        "# Written by Alert Station; saving the host-ban settings overwrites this file.\n"
        f"[{settings.app_jail}]\n"
        "enabled = true\n"
        f"filter = {filter_name(settings)}\n"
        f"logpath = {settings.log_file} tail\n"
        "backend = polling\n"
        "maxretry = 1\n"
        "findtime = 1d\n"
        "bantime = -1\n"
    )
    if settings.ssh_jail_enabled:
        text += f"\n[{settings.ssh_jail}]\nenabled = true\nbantime = {settings.ssh_ban_seconds}\n"
    return text


FILTER_FILE_TEXT = (
    "# Written by Alert Station; saving the host-ban settings overwrites this file.\n"
    "# Matches the ban lines of the security log; unban lines and reasons never match.\n"
    "[Definition]\n"
    r"failregex = ^ alertstation ban <ADDR> source=[a-z_]+(?: reason=|$)" + "\n"
    "ignoreregex =\n"
    r"datepattern = {^LN-BEG}%%ExY-%%Exm-%%ExdT%%H:%%M:%%S(?:\.%%f)?%%z" + "\n"
)


def helper_commands(settings: HostbanSettings) -> list[list[str]]:
    """Return the root helper's commands that write the jail and filter files and the log."""
    jail = [
        HELPER,
        "jail",
        settings.jail_file,
        settings.app_jail,
        settings.filter_file,
        settings.log_file,
    ]
    if settings.ssh_jail_enabled:
        jail += [settings.ssh_jail, str(settings.ssh_ban_seconds)]
    return [jail, [HELPER, "filter", settings.filter_file], [HELPER, "log", settings.log_file]]


def _run_helper(command: list[str]) -> None:
    """Run one helper command through ``sudo -n``; PrivilegeDenied when it is refused or fails."""
    action = f"write {command[2]}"
    try:
        done = run_command(command, sudo=True)
    except DaemonError as error:
        raise privilege_denied(action, str(error)) from None
    if done.returncode != 0:
        detail = " ".join((done.stderr + " " + done.stdout).split()) or f"exit {done.returncode}"
        raise privilege_denied(action, detail)


def _write(path: str, text: str | None) -> None:
    """Write a file (or create the log when ``text`` is None); PrivilegeDenied when refused."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            hostban_log.ensure_file(path)
        else:
            temporary = target.with_name(f".{target.name}.tmp")
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
    except PermissionError as error:
        raise privilege_denied(f"write {path}", str(error)) from None
    except OSError as error:
        if error.errno == errno.EROFS:
            raise privilege_denied(f"write {path}", str(error)) from None
        message = f"could not write {path}: {error.strerror or error}"
        raise ActuatorError(message, actuator_error=message) from None


def write_config(settings: HostbanSettings) -> None:
    """Write the jail and filter files and ensure the security log exists.

    As root (or ``sudo_mode`` never) the station writes them itself; otherwise the root-owned
    helper does, through ``sudo -n``. A refusal raises ``PrivilegeDenied``.
    """
    if settings.uses_sudo():
        for command in helper_commands(settings):
            _run_helper(command)
        return
    _write(settings.jail_file, jail_file_text(settings))
    _write(settings.filter_file, FILTER_FILE_TEXT)
    _write(settings.log_file, None)


def _restart(daemon: Fail2ban) -> None:
    daemon.control("restart" if daemon.ping() else "start")


def apply(station: Station, settings: HostbanSettings) -> SyncReport:
    """Write the files, restart the daemon, verify the jail loaded and re-push the bans."""
    write_config(settings)
    daemon = settings.daemon()
    try:
        _restart(daemon)
        jails = daemon.jails()
    except PrivilegeError as error:
        raise privilege_denied("run fail2ban-client", str(error)) from None
    except DaemonError as error:
        raise ActuatorError(f"fail2ban did not start: {error}", actuator_error=str(error)) from None
    if settings.app_jail not in jails:
        message = daemon.self_test() or f"jail {settings.app_jail} is not loaded"
        raise ActuatorError(
            f"fail2ban did not load the {settings.app_jail} jail: {message}",
            actuator_error=message,
        )
    return heal(station, flush_when_off=True)


def control(station: Station, action: str) -> SyncReport | None:
    """Start, stop or restart the daemon; re-push the bans after a start or restart."""
    with station.engine.connect() as conn:
        settings = load_settings(conn)
    daemon = settings.daemon()
    try:
        if action == "restart":
            _restart(daemon)
        else:
            daemon.control(action)
    except PrivilegeError as error:
        raise privilege_denied(f"{action} fail2ban", str(error)) from None
    except DaemonError as error:
        raise ActuatorError(
            f"fail2ban {action} failed: {error}", actuator_error=str(error)
        ) from None
    if action == "stop":
        return None
    return heal(station, flush_when_off=True)


def ssh_unban(station: Station, address: str) -> int:
    """Lift an SSH jail ban and switch off its ssh_brute_force entries; return how many."""
    with station.engine.connect() as conn:
        settings = load_settings(conn)
    try:
        settings.daemon().unban(settings.ssh_jail, [address])
    except PrivilegeError as error:
        raise privilege_denied("run fail2ban-client", str(error)) from None
    except DaemonError as error:
        message = str(error)
        if "is not banned" not in message:
            raise ActuatorError(
                f"fail2ban unban failed: {message}", actuator_error=message
            ) from None
    now = station.clock()
    query = select(ip_filters.c.id).where(
        ip_filters.c.kind == BLOCKLIST,
        ip_filters.c.value == address,
        ip_filters.c.source == SSH_BRUTE_FORCE,
        ip_filters.c.active.is_(True),
    )
    with begin_write(station.engine) as conn:
        ids = [row.id for row in conn.execute(query)]
        for filter_id in ids:
            service.update_filter(
                conn,
                filter_id,
                {"active": False},
                now=now,
                requester_ip="127.0.0.1",
                confirm_lockout=True,
            )
    if ids:
        station.bans.clear()
        mirror_change(station)
    return len(ids)


def status(station: Station) -> dict[str, Any]:
    """Run the self-heal, then describe service, toggles, jails, counts and errors."""
    report = heal(station)
    with station.engine.connect() as conn:
        settings = load_settings(conn)
    daemon = settings.daemon()
    running = daemon.ping()
    jails: list[str] = []
    actuator_error = None
    if running:
        try:
            jails = daemon.jails()
        except DaemonError as error:
            actuator_error = str(error)
    if not running or settings.app_jail not in jails:
        actuator_error = daemon.self_test() or actuator_error
    return {
        "service": {"running": running, "jails": jails},
        "mirror_enabled": settings.mirror_enabled,
        "ssh_jail_enabled": settings.ssh_jail_enabled,
        "ssh_ban_seconds": settings.ssh_ban_seconds,
        "jail": {"name": settings.app_jail, "loaded": settings.app_jail in jails},
        "ssh_jail": {
            "name": settings.ssh_jail,
            "loaded": settings.ssh_jail in jails,
        },
        "mirrorable": report.mirrorable,
        "mirrored": report.mirrored,
        "firewall_pending": report.firewall_pending,
        "sync_error": report.error,
        "actuator_error": actuator_error,
        "enforcement": running and settings.app_jail in jails and settings.mirror_enabled,
        "sudo": settings.uses_sudo(),
        "settings": settings.as_dict(),
    }
