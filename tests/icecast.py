"""A throwaway Icecast server (Debian's icecast2) on a free loopback port, for the stream tests.

It runs from a private configuration (custom source and admin passwords, its own log folder),
as the ``icecast2`` account when the tests run as root (Icecast refuses to run as root). One
mount can be protected with Icecast's own mount authentication (an htpasswd file holding one
listener). The start waits with a generous deadline (CI is a loaded 2-core machine).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.eas.test_multimon import require_tool
from tests.processes import DEADLINE, free_port, wait_until

SERVER_ACCOUNT = "icecast2"  # created by Debian's icecast2 package

CONFIG = """<icecast>
  <location>test</location>
  <admin>test@localhost</admin>
  <hostname>127.0.0.1</hostname>
  <limits>
    <clients>20</clients>
    <sources>4</sources>
    <burst-on-connect>1</burst-on-connect>
    <burst-size>65535</burst-size>
    <source-timeout>10</source-timeout>
  </limits>
  <authentication>
    <source-password>{password}</source-password>
    <admin-user>admin</admin-user>
    <admin-password>{admin}</admin-password>
  </authentication>
  <listen-socket>
    <port>{port}</port>
    <bind-address>127.0.0.1</bind-address>
  </listen-socket>
{mounts}  <paths>
    <basedir>/usr/share/icecast2</basedir>
    <logdir>{logdir}</logdir>
    <webroot>/usr/share/icecast2/web</webroot>
    <adminroot>/usr/share/icecast2/admin</adminroot>
  </paths>
  <logging>
    <accesslog>access.log</accesslog>
    <errorlog>error.log</errorlog>
    <loglevel>3</loglevel>
  </logging>
</icecast>
"""

PROTECTED_MOUNT = """  <mount type="normal">
    <mount-name>{mount}</mount-name>
    <authentication type="htpasswd">
      <option name="filename" value="{users}"/>
      <option name="allow_duplicate_users" value="1"/>
    </authentication>
  </mount>
"""


@dataclass(frozen=True)
class ListenerLogin:
    """A mount that only this listener may pull (Icecast's htpasswd mount authentication)."""

    mount: str
    user: str
    password: str


@dataclass(frozen=True)
class IcecastServer:
    """A running throwaway Icecast: where it listens, its passwords and its folder."""

    port: int
    password: str  # the source password
    admin_password: str
    folder: Path

    def url(self, mount: str) -> str:
        return f"http://127.0.0.1:{self.port}{mount}"

    def log(self) -> str:
        path = self.folder / "log" / "error.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"


def _write_config(server: IcecastServer, protected: ListenerLogin | None) -> list[Path]:
    """Write icecast.xml (and the listener file); return the paths the server must own."""
    folder = server.folder
    (folder / "log").mkdir()
    owned = [folder, folder / "log"]
    mounts = ""
    if protected is not None:
        users = folder / "listeners"
        digest = hashlib.md5(protected.password.encode()).hexdigest()  # noqa: S324 - Icecast's
        users.write_text(f"{protected.user}:{digest}\n")
        owned.append(users)
        mounts = PROTECTED_MOUNT.format(mount=protected.mount, users=users)
    config = folder / "icecast.xml"
    config.write_text(
        CONFIG.format(
            password=server.password,
            admin=server.admin_password,
            port=server.port,
            mounts=mounts,
            logdir=folder / "log",
        )
    )
    owned.append(config)
    return owned


def _listening(process: subprocess.Popen[bytes], server: IcecastServer) -> bool:
    if process.poll() is not None:
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        pytest.fail(f"icecast2 exited with {process.returncode}: {stderr}{server.log()}")
    try:
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
    except OSError:
        return False
    return True


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``; kill it if it has not ended after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def icecast_server(
    prefix: str = "alertstation-icecast-",
    *,
    protected: ListenerLogin | None = None,
    deadline: float = DEADLINE,
) -> Iterator[IcecastServer]:
    """Start a private icecast2 on a free loopback port; stop it and remove its files after."""
    program = require_tool("icecast2")
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    server = IcecastServer(
        free_port(), secrets.token_urlsafe(12), secrets.token_urlsafe(12), folder
    )
    command = [program, "-c", str(folder / "icecast.xml")]
    owned = _write_config(server, protected)
    if os.geteuid() == 0:
        account = pwd.getpwnam(SERVER_ACCOUNT)
        for path in owned:
            os.chown(path, account.pw_uid, account.pw_gid)
        command = ["runuser", "-u", SERVER_ACCOUNT, "--", *command]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        what = f"icecast2 did not listen on {server.port}"
        try:
            wait_until(lambda: _listening(process, server), what, None, deadline)
        except AssertionError as ex:
            pytest.fail(f"{ex}: {server.log()}")
        yield server
    finally:
        stop(process)
        if process.stderr:
            process.stderr.close()
        shutil.rmtree(folder, ignore_errors=True)
