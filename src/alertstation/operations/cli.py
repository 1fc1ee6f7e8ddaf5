"""The ``alertstation backup`` and ``alertstation restore`` commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from alertstation.commands import CommandError, load_settings, open_engine

EXIT_OK = 0


def cmd_backup(args: argparse.Namespace) -> int:
    """Write an archive of the running station (database, checkpoint log, keys on request)."""
    from alertstation.db.types import utcnow
    from alertstation.operations.backup import BackupError, write_backup

    settings = load_settings()
    engine = open_engine(settings)
    try:
        report = write_backup(
            settings, engine, Path(args.out), include_keys=args.include_keys, now=utcnow()
        )
    except BackupError as ex:
        raise CommandError(f"backup: {ex}") from ex
    finally:
        engine.dispose()
    for line in report.lines():
        print(line)
    return EXIT_OK


def cmd_restore(args: argparse.Namespace) -> int:
    """Restore a backup archive into the configured database and data directory."""
    from alertstation.db.types import utcnow
    from alertstation.operations.backup import BackupError, restore_archive

    settings = load_settings(create=True)  # a restore may make the station on a new host
    engine = open_engine(settings)
    try:
        report = restore_archive(
            settings,
            engine,
            Path(args.archive),
            now=utcnow(),
            force=args.force,
            trust_archive=args.trust_archive,
        )
    except BackupError as ex:
        raise CommandError(f"restore: {ex}") from ex
    finally:
        engine.dispose()
    for line in report.lines():
        print(line)
    print("next: run `alertstation migrate` if this release is newer, then start the station")
    return EXIT_OK


def add_operations_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``backup`` and ``restore`` on the top-level sub-parsers."""
    description = (
        "Write one archive of the running station: a consistent database copy and the audit "
        "checkpoint log (keys only with --include-keys), with a MAC keyed with the station's "
        "backup key. It holds password hashes and stored secrets; it is written 0600."
    )
    backup = sub.add_parser("backup", help="Back the station up", description=description)
    backup.add_argument("--out", required=True, metavar="FILE", help="the archive to write")
    backup.add_argument(
        "--include-keys",
        action="store_true",
        help="also store the session secret and audit ledger key (needed on another machine)",
    )
    backup.set_defaults(func=cmd_backup)
    restore = sub.add_parser(
        "restore",
        help="Restore a backup archive",
        description="Validate the archive in a staging folder (members, MAC, keys, database, "
        "schema revision, row counts), then replace the database, checkpoint log and keys (when "
        "it holds them) in one step. Stop the station first.",
    )
    restore.add_argument("archive", metavar="FILE", help="an archive written by `backup`")
    restore.add_argument(
        "--force",
        action="store_true",
        help="restore although the worker's heartbeat is fresh (only when it is known dead)",
    )
    restore.add_argument(
        "--trust-archive",
        action="store_true",
        help="accept an archive whose MAC does not match this station's backup key",
    )
    restore.set_defaults(func=cmd_restore)
