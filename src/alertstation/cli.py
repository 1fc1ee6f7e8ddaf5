"""The ``alertstation`` command."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from alertstation.alerts.cli import add_alerts_commands
from alertstation.alerts.poll.cli import add_poll_commands
from alertstation.audit.cli import add_audit_commands
from alertstation.commands import (
    EXIT_FAILURE,
    EXIT_USAGE,
    CommandError,
    Parser,
    open_database,
)
from alertstation.commands import load_settings as _settings
from alertstation.commands import open_engine as _engine
from alertstation.commands import require_current_schema as _require_current_schema
from alertstation.eas.cli import add_eas_commands
from alertstation.errors import AppError
from alertstation.operations.cli import add_operations_commands
from alertstation.security.bans.cli import add_bans_commands
from alertstation.settings import Settings, SettingsError
from alertstation.traffic.cli import add_traffic_commands
from alertstation.version import __version__
from alertstation.zones.cli import add_zones_commands

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from alertstation.context import Station


def _open_station() -> Station:
    """Return a Station on the configured database (refused while migrations are pending)."""
    from alertstation.station import build_station

    settings, engine = open_database()
    return build_station(settings, engine)


def cmd_version(args: argparse.Namespace) -> int:
    """Print the version."""
    print(f"alertstation {__version__}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Upgrade the database schema to the newest revision."""
    from alertstation.db.migrate import head_revision, pending_revisions, upgrade_to_head

    engine = _engine(_settings(create=not args.check))
    if args.check:
        pending = pending_revisions(engine)
        if pending:
            print(f"{len(pending)} migration(s) pending: {', '.join(pending)}")
            return EXIT_FAILURE
        print(f"database is at head ({head_revision(engine)})")
        return 0
    applied = upgrade_to_head(engine)
    _record_migrated_settings(engine)
    if applied:
        print(f"applied {len(applied)} migration(s): {', '.join(applied)}")
    else:
        print(f"database already at head ({head_revision(engine)}); nothing to do")
    return 0


def _record_migrated_settings(engine: Engine) -> None:
    """Record in the audit ledger what a migration moved (a migration holds no ledger key)."""
    from alertstation.audit.ledger import AuditLedger
    from alertstation.db.engine import begin_write
    from alertstation.settings_admin.sections import record_moved_time_zone

    with begin_write(engine) as conn:
        zone = record_moved_time_zone(conn, AuditLedger(_settings(create=True).audit_ledger_key))
    if zone is not None:
        print(f"the weekly test's time zone {zone} is now the station time zone")


def _read_password_stdin() -> str:
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise CommandError("no password on standard input")
    return password


def cmd_user_create(args: argparse.Namespace) -> int:
    """Create an account; print a generated password once unless one came on stdin."""
    from alertstation.auth.passwords import generate_password
    from alertstation.auth.service import create_user
    from alertstation.db.engine import begin_write

    settings, engine = open_database()
    password = _read_password_stdin() if args.password_stdin else generate_password()
    with begin_write(engine) as conn:
        user = create_user(conn, username=args.username, role=args.role, password=password)
    print(f"created user {user.username!r} with role {user.role}")
    if not args.password_stdin:
        print(f"password (shown once): {password}")
    return 0


def cmd_user_ensure_admin(args: argparse.Namespace) -> int:
    """Create the first admin when the station has none; print its password once."""
    from alertstation.auth.passwords import generate_password
    from alertstation.auth.service import count_active_admins, create_user
    from alertstation.db.engine import begin_write

    settings, engine = open_database(create=True)
    with begin_write(engine) as conn:
        if count_active_admins(conn):
            print("an admin account already exists; nothing to do")
            return 0
        password = generate_password()
        create_user(conn, username=args.username, role="admin", password=password)
    print("=" * 64)
    print(f"First admin account created: {args.username}")
    print(f"Password (shown once, store it now): {password}")
    print("=" * 64)
    return 0


def cmd_user_passwd(args: argparse.Namespace) -> int:
    """Set an account's password and end its sessions."""
    from alertstation.auth import service, sessions
    from alertstation.auth.passwords import generate_password
    from alertstation.db.engine import begin_write
    from alertstation.db.types import utcnow

    settings, engine = open_database()
    password = _read_password_stdin() if args.password_stdin else generate_password()
    with begin_write(engine) as conn:
        user = service.find_user(conn, args.username)
        service.set_password(conn, user.id, password)
        ended = sessions.end_sessions(
            conn, reason=sessions.ENDED_PASSWORD_CHANGED, now=utcnow(), user_id=user.id
        )
    print(f"password of {user.username!r} changed; {ended} session(s) ended")
    if not args.password_stdin:
        print(f"password (shown once): {password}")
    return 0


def _set_active(args: argparse.Namespace, active: bool) -> int:
    from alertstation.auth import service, sessions
    from alertstation.db.engine import begin_write
    from alertstation.db.types import utcnow

    settings, engine = open_database()
    with begin_write(engine) as conn:
        user = service.find_user(conn, args.username)
        service.update_user(conn, user.id, is_active=active)
        ended = 0
        if not active:
            ended = sessions.end_sessions(
                conn, reason=sessions.ENDED_USER_DISABLED, now=utcnow(), user_id=user.id
            )
    state = "enabled" if active else f"disabled; {ended} session(s) ended"
    print(f"user {user.username!r} {state}")
    return 0


def cmd_user_disable(args: argparse.Namespace) -> int:
    """Disable an account and end its sessions (never the last enabled admin)."""
    return _set_active(args, False)


def cmd_user_enable(args: argparse.Namespace) -> int:
    """Enable an account again."""
    return _set_active(args, True)


def cmd_user_list(args: argparse.Namespace) -> int:
    """List accounts."""
    from alertstation.auth import service

    settings, engine = open_database()
    with engine.connect() as conn:
        accounts = service.list_users(conn)
    if not accounts:
        print("no accounts yet; create one with `alertstation user create`")
        return 0
    print(f"{'USERNAME':24} {'ROLE':10} STATE")
    for user in accounts:
        state = "enabled" if user.is_active else "disabled"
        print(f"{user.username:24} {user.role:10} {state}")
    return 0


def _listing_settings() -> Settings:
    """Settings enough to build the route table: no data directory, database or key is read."""
    from alertstation.settings import assets_dir_from

    return Settings(
        data_dir=Path(os.devnull),
        database_url="sqlite://",
        secret_key="route-listing-" + "0" * 32,
        audit_ledger_key="route-listing-" + "0" * 32,
        assets_dir=assets_dir_from(os.environ),
    )


def cmd_routes(args: argparse.Namespace) -> int:
    """List every registered route with its access rule."""
    from alertstation.app import build_registry, build_station

    registry = build_registry(build_station(_listing_settings()))
    rows = [(r.method, r.path, str(r.access), r.summary) for r in registry]
    if args.json:
        import orjson

        keys = ("method", "path", "access", "summary")
        sys.stdout.write(orjson.dumps([dict(zip(keys, row, strict=True)) for row in rows]).decode())
        sys.stdout.write("\n")
        return 0
    widths = [
        max(len(row[i]) for row in rows + [("METHOD", "PATH", "ACCESS", "")]) for i in range(3)
    ]
    header = ("METHOD", "PATH", "ACCESS", "SUMMARY")
    for row in [header, *rows]:
        print(
            "  ".join(
                cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)
            ).rstrip()
        )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the web interface with gunicorn."""
    from alertstation.server import serve
    from alertstation.worker.supervisor import PARENT_ENV, die_with_parent

    die_with_parent()
    settings = _settings()
    _require_current_schema(settings)
    if PARENT_ENV not in os.environ:  # under `run`, which loaded the catalog already
        _ensure_zone_catalog(settings)
    _sweep_uploads(settings)
    serve(args.bind, args.workers, args.threads, settings.data_dir)
    return 0


def _sweep_uploads(settings: Settings) -> None:
    """Remove upload, backup and restore staging a killed process left behind."""
    from alertstation.worker.upload_sweep import leftover_folders, sweep_stale_uploads

    sweep_stale_uploads(leftover_folders(settings), time.time())


def _ensure_zone_catalog(settings: Settings) -> None:
    """Seed or refresh the zone catalog at start, so a DBF dropped into assets/ is picked up."""
    from alertstation.zones.service import ensure_catalog
    from alertstation.zones.snapshot import seed_from_snapshot

    engine = _engine(settings)
    try:
        # No zone files and an empty catalog: start from the bundled land-zone snapshot.
        report = ensure_catalog(engine, settings) or seed_from_snapshot(engine)
    except ValueError as ex:
        raise CommandError(f"zone catalog: {ex}") from ex
    finally:
        engine.dispose()  # before gunicorn forks: no pooled connection is inherited
    if report is not None:
        print("zone catalog: " + "; ".join(report.lines()), flush=True)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def cmd_worker(args: argparse.Namespace) -> int:
    """Run periodic jobs, the EAS airing loop and the audio monitor; only the leader runs them."""
    from alertstation.audio.monitor import start_monitor
    from alertstation.eas.airing.onair import start_airing
    from alertstation.operations.jobs import STATION_JOBS
    from alertstation.station import build_station
    from alertstation.worker.leader import LeaderLease, leader_lock_for
    from alertstation.worker.runner import run_worker
    from alertstation.worker.supervisor import die_with_parent

    die_with_parent()
    settings = _settings()
    _require_current_schema(settings)
    _sweep_uploads(settings)
    stop = threading.Event()
    _stop_on_signals(stop)
    station = build_station(settings)
    lock = leader_lock_for(station.engine, settings.data_dir)
    lease = LeaderLease(lock)  # airing stops once the leader can no longer confirm its lock
    airing: list[threading.Thread] = []  # airing takes real time: its own thread, not a job

    def on_leader() -> None:
        airing.append(start_airing(station, stop, leading=lease.confirmed))
        airing.append(start_monitor(station, stop))  # every audio source in its own thread

    try:
        run_worker(station, stop, jobs=STATION_JOBS, lock=lock, lease=lease, on_leader=on_leader)
    finally:
        stop.set()  # also on lost leadership: the outputs stop and the item is marked failed
        for thread in airing:
            thread.join(timeout=10)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Serve the web interface and run the worker as supervised children: a one-box station.

    The worker is restarted with back-off when it exits; when it keeps failing, or the web
    server exits, ``run`` stops and exits 1 so the service manager restarts the station.
    """
    from alertstation.worker.supervisor import supervise_argv

    settings = _settings(create=True)
    _require_current_schema(settings)
    _ensure_zone_catalog(settings)
    _sweep_uploads(settings)
    # What stays up is a fresh interpreter holding only the supervisor (same pid and group).
    level, fmt = settings.log_level, "text" if sys.stderr.isatty() else settings.log_format
    argv = supervise_argv(args.bind, args.workers, args.threads, settings.data_dir, level, fmt)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)
    return EXIT_FAILURE  # pragma: no cover (execv does not return)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _bind(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return text


def _add_server_options(parser: argparse.ArgumentParser, workers: int) -> None:
    parser.add_argument(
        "--bind", type=_bind, default="127.0.0.1:8080", help="HOST:PORT to listen on"
    )
    parser.add_argument("--workers", type=_positive_int, default=workers, help="worker processes")
    parser.add_argument("--threads", type=_positive_int, default=4, help="threads per worker")


def build_parser() -> Parser:
    """Describe every sub-command."""
    parser = Parser(prog="alertstation", description="Alert Station command-line interface.")
    parser.add_argument("--version", action="version", version=f"alertstation {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    def add(name: str, func: Callable[[argparse.Namespace], int], help_text: str) -> Parser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(func=func)
        return command

    add("version", cmd_version, "Print the version.")
    migrate = add("migrate", cmd_migrate, "Upgrade the database schema to the newest revision.")
    migrate.add_argument("--check", action="store_true", help="only report pending migrations")
    routes = add("routes", cmd_routes, "List every route with its method and access rule.")
    routes.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_server_options(add("serve", cmd_serve, "Serve the web interface (gunicorn)."), 2)
    add("worker", cmd_worker, "Run periodic jobs as the single leader across hosts.")
    _add_server_options(add("run", cmd_run, "Run web and worker together on one box."), 2)

    add_audit_commands(sub)
    add_zones_commands(sub)
    add_eas_commands(sub, _open_station)
    add_alerts_commands(sub)
    add_poll_commands(sub)
    add_bans_commands(sub, _open_station)
    add_traffic_commands(sub, _open_station)
    add_operations_commands(sub)

    user = sub.add_parser("user", help="Manage accounts.", description="Manage accounts.")
    user_sub = user.add_subparsers(dest="user_command", metavar="ACTION", parser_class=Parser)
    user_sub.required = True
    create = user_sub.add_parser(
        "create", help="Create an account.", description="Create an account."
    )
    create.set_defaults(func=cmd_user_create)
    create.add_argument("--username", required=True)
    create.add_argument("--role", required=True, help="admin, operator, viewer or demo")
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    ensure = user_sub.add_parser(
        "ensure-admin",
        help="Create the first admin if there is none.",
        description="Create the first admin if there is none; print its password once.",
    )
    ensure.set_defaults(func=cmd_user_ensure_admin)
    ensure.add_argument("--username", default="admin")
    passwd = user_sub.add_parser(
        "passwd",
        help="Set a password (ends the account's sessions).",
        description="Set an account's password; a generated one is printed once.",
    )
    passwd.set_defaults(func=cmd_user_passwd)
    passwd.add_argument("--username", required=True)
    passwd.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    for name, func, text in (
        ("disable", cmd_user_disable, "Disable an account and end its sessions."),
        ("enable", cmd_user_enable, "Enable a disabled account."),
    ):
        toggle = user_sub.add_parser(name, help=text, description=text)
        toggle.set_defaults(func=func)
        toggle.add_argument("--username", required=True)
    listing = user_sub.add_parser("list", help="List accounts.", description="List accounts.")
    listing.set_defaults(func=cmd_user_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CommandError, SettingsError, AppError, ValueError) as ex:
        message = getattr(ex, "message", None) or str(ex)
        print(f"alertstation: error: {message}", file=sys.stderr)
        return EXIT_USAGE if isinstance(ex, SettingsError | AppError | ValueError) else EXIT_FAILURE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
