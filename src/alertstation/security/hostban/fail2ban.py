"""Talk to the fail2ban daemon through ``fail2ban-client``: argument lists, timeouts, parsing.

Every command runs without a shell and without standard input (never interactive), with a
timeout, against the socket and config directory of the host-ban settings. Failures raise
``DaemonError`` carrying the daemon's own error lines. When the service is not root, commands run
as ``sudo -n <command>``: sudo never prompts, and a command the privilege rules do not allow
raises ``PrivilegeError`` (a ``DaemonError``) naming the update script that redeploys them.
"""

from __future__ import annotations

import ast
import ipaddress
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

CLIENT = "fail2ban-client"
SUDO = "sudo"
TIMEOUT = 20.0
UPDATE_SCRIPT = "scripts/update-privileges.sh"
HELPER = "/usr/local/libexec/alertstation/hostban-files"
"""Root-owned helper (installed by the update script) that writes the jail and filter files and
creates the security log; the privilege rules allow it only with the configured paths."""
_SUDO_REFUSAL = re.compile(
    r"^sudo: .*(?:password is required|terminal is required|command not found|not allowed"
    r"|sudoers|unable to execute|no tty)"
    r"|is not allowed to execute|is not in the sudoers file"
)
_LOG_PREFIX = re.compile(r"^\S+ \S+ \S+\s+\[\d+\]: (?:ERROR|CRITICAL)\s+")
_JAIL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class DaemonError(RuntimeError):
    """A fail2ban command failed; the message is the daemon's own error text."""


class PrivilegeError(DaemonError):
    """sudo refused a command: the privilege rules are missing or out of date."""


def sudo_refusal(output: str) -> str | None:
    """Return sudo's own refusal line in a command's output, None when sudo did not refuse."""
    for line in output.splitlines():
        if _SUDO_REFUSAL.search(line.strip()):
            return line.strip()
    return None


def run_command(
    command: Sequence[str], *, sudo: bool, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (through ``sudo -n`` when asked): no shell, no standard input, a timeout.

    Returns the finished process whatever its exit status. Raises ``PrivilegeError`` when sudo
    is missing or refuses, ``DaemonError`` when the program is missing or times out.
    """
    argv = [SUDO, "-n", "--", *command] if sudo else list(command)
    try:
        done = subprocess.run(  # noqa: S603 - an argument list, no shell
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        if sudo and shutil.which(SUDO) is None:
            raise PrivilegeError(
                f"sudo is not installed; install it and run {UPDATE_SCRIPT}"
            ) from None
        raise DaemonError(f"{command[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise DaemonError(f"{' '.join(command)} timed out") from None
    if sudo and done.returncode != 0:
        refusal = sudo_refusal(done.stderr)
        if refusal is not None:
            raise PrivilegeError(
                f"{refusal} (redeploy the privilege rules: run {UPDATE_SCRIPT} as root)"
            )
    return done


def check_jail_name(name: str) -> str:
    """Return ``name`` when it is a safe jail name (letters, digits, ``_.-``); else ValueError."""
    if not _JAIL_NAME.match(name):
        raise ValueError(f"{name!r} is not a valid jail name")
    return name


def check_address(value: str) -> str:
    """Return the canonical text of one IP address; ValueError for anything else."""
    return str(ipaddress.ip_address(value.strip()))


def is_mirrorable(value: str) -> bool:
    """Tell whether a ban list value is one routable, non-loopback address (never a range)."""
    if "/" in value:
        return False
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return not (
        address.is_loopback
        or address.is_unspecified
        or address.is_multicast
        or address.is_link_local
        or address.is_reserved
    )


def error_text(output: str) -> str:
    """Return the error lines of fail2ban output (log prefixes removed), else the whole text."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [_LOG_PREFIX.sub("", line) for line in lines if _LOG_PREFIX.match(line)]
    if errors:
        return "; ".join(errors)
    plain = [line for line in lines if " WARNING " not in line]
    return "; ".join(plain) or "fail2ban-client failed without a message"


def parse_jail_list(output: str) -> list[str]:
    """Return the jail names of ``fail2ban-client status`` output."""
    for line in output.splitlines():
        if "Jail list:" in line:
            names = line.split("Jail list:", 1)[1]
            return [name.strip() for name in names.split(",") if name.strip()]
    return []


def parse_banned(output: str) -> list[str]:
    """Return the addresses of ``get <jail> banned`` output (a Python list literal)."""
    text = output.strip()
    if not text:
        return []
    try:
        value = ast.literal_eval(text.splitlines()[-1])
    except (ValueError, SyntaxError):
        raise DaemonError(f"unexpected banned list: {text[:200]}") from None
    if isinstance(value, str):
        value = [value]
    return sorted(str(item) for item in value)


@dataclass(frozen=True)
class Fail2ban:
    """One fail2ban daemon, addressed by its socket and config directory."""

    socket_path: str
    config_dir: str
    client: str = CLIENT
    timeout: float = TIMEOUT
    sudo: bool = False

    def command(self, *args: str, config: bool = False) -> list[str]:
        """Return the argument list of one client command (without the ``sudo -n`` prefix)."""
        command = [self.client]
        if config:
            command += ["-c", self.config_dir]
        return [*command, "-s", self.socket_path, *args]

    def run(self, *args: str, config: bool = False) -> str:
        """Run one client command and return its standard output; DaemonError on failure."""
        command = self.command(*args, config=config)
        done = run_command(command, sudo=self.sudo, timeout=self.timeout)
        if done.returncode != 0:
            raise DaemonError(error_text(done.stderr + "\n" + done.stdout))
        return done.stdout

    def ping(self) -> bool:
        """Tell whether the daemon answers on its socket (False as well when sudo refuses)."""
        try:
            self.run("ping")
        except DaemonError:
            return False
        return True

    def jails(self) -> list[str]:
        """Return the names of the loaded jails."""
        return parse_jail_list(self.run("status"))

    def banned(self, jail: str) -> list[str]:
        """Return the addresses banned in ``jail``, sorted."""
        return parse_banned(self.run("get", check_jail_name(jail), "banned"))

    def ban(self, jail: str, addresses: Iterable[str]) -> None:
        """Ban validated single addresses in ``jail``."""
        self._set(jail, "banip", addresses)

    def unban(self, jail: str, addresses: Iterable[str]) -> None:
        """Lift the ban of validated single addresses in ``jail``."""
        self._set(jail, "unbanip", addresses)

    def _set(self, jail: str, verb: str, addresses: Iterable[str]) -> None:
        checked = [check_address(address) for address in addresses]
        if checked:
            self.run("set", check_jail_name(jail), verb, *checked)

    def control(self, action: str) -> str:
        """Start, stop, restart or reload the daemon (reading the config directory)."""
        if action not in CONTROL_ACTIONS:
            raise ValueError(f"unknown service action {action!r}")
        return self.run(action, config=True)

    def self_test(self) -> str | None:
        """Run the daemon's configuration self-test; return its error text, None when it passes.

        A sudo refusal is returned as the error text too (it names the update script).
        """
        try:
            self.run("--test", config=True)
        except DaemonError as error:
            return str(error)
        return None


CONTROL_ACTIONS: Sequence[str] = ("start", "stop", "restart", "reload")
