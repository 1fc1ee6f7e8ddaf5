#!/usr/bin/env python3
"""Run a command beside a throwaway PostgreSQL cluster.

Usage: pg_throwaway.py -- COMMAND [ARG...]

Creates a cluster in a temporary directory, starts it on a free loopback port, runs COMMAND with
ALERTSTATION_TEST_PG_URL pointing at it, then stops the cluster and removes the directory, also
when the command fails or the run is interrupted. Runs the server as the ``postgres`` account when
started as root (PostgreSQL refuses to run as root). Standard library only.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path


def find_pg_bin() -> Path:
    """Return the directory holding initdb and pg_ctl, newest major version first."""
    explicit = os.environ.get("PG_BIN")
    if explicit:
        return Path(explicit)
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
        reverse=True,
    )
    if candidates:
        return Path(candidates[0]).parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    sys.exit("pg_throwaway: PostgreSQL server binaries not found; run scripts/install-test-deps.sh")


def free_port() -> int:
    """Ask the kernel for a free TCP port on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def as_server_user(command: list[str]) -> list[str]:
    """Prefix a command so it runs as the postgres account when we are root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.exit("usage: pg_throwaway.py -- COMMAND [ARG...]")
    command = argv[argv.index("--") + 1 :]
    pg_bin = find_pg_bin()
    workdir = Path(tempfile.mkdtemp(prefix="alertstation-pg-"))
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(workdir, account.pw_uid, account.pw_gid)
    data = workdir / "data"
    log = workdir / "server.log"
    port = free_port()
    pg_ctl = [str(pg_bin / "pg_ctl"), "-D", str(data)]

    def stop_on_signal(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_signal)
    started = False
    try:
        subprocess.run(
            as_server_user(
                [
                    str(pg_bin / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        options = (
            f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        subprocess.run(
            as_server_user([*pg_ctl, "-l", str(log), "-w", "-t", "60", "-o", options, "start"]),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        started = True
        url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        print(f"pg_throwaway: PostgreSQL ({pg_bin.parent.name}) on 127.0.0.1:{port}", flush=True)
        env = {**os.environ, "ALERTSTATION_TEST_PG_URL": url}
        return subprocess.call(command, env=env)
    except subprocess.CalledProcessError as ex:
        if log.exists():
            sys.stderr.write(log.read_text())
        print(f"pg_throwaway: {' '.join(ex.cmd)} failed with {ex.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        if started:
            subprocess.run(
                as_server_user([*pg_ctl, "-m", "immediate", "-w", "stop"]),
                stdout=subprocess.DEVNULL,
                check=False,
            )
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
