"""The ``alertstation zones`` sub-commands: ``sync``, ``ensure`` and ``download``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from alertstation.commands import CommandError, open_database

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from alertstation.settings import Settings

EXIT_OK = 0
BAR_WIDTH = 30


class ProgressLine:
    """Show reading progress on stderr: a redrawn bar on a terminal, one line per file otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())

    def __call__(self, label: str, done: int, total: int) -> None:
        finished = done >= total
        if not self._tty and not finished:
            return
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        line = f"reading {label} [{bar}] {done}/{total} records"
        if self._tty:
            self._stream.write("\r" + line + ("\n" if finished else ""))
        else:
            self._stream.write(line + "\n")
        self._stream.flush()


def _station() -> tuple[Settings, Engine]:
    """Return (settings, engine), refusing a database that still needs migrating."""
    return open_database()


def cmd_zones_sync(args: argparse.Namespace) -> int:
    """Apply zone DBF files: the given ones, else every family the resolver finds."""
    from alertstation.zones.resolver import explicit_paths, resolve_dbf_paths
    from alertstation.zones.service import apply_files

    settings, engine = _station()
    try:
        if args.dbf_path:
            paths = explicit_paths(args.dbf_path)
        else:
            paths = resolve_dbf_paths(settings.assets_dir, env_path=settings.wx_zone_dbf_path)
        if not paths:
            raise CommandError(
                f"no zone DBF files in {settings.assets_dir}; fetch them first or pass --dbf-path"
            )
        report = apply_files(engine, paths, settings=settings, progress=ProgressLine())
    finally:
        engine.dispose()
    for line in report.lines():
        print(line)
    print(f"zone catalog synced (generation {report.generation})")
    return EXIT_OK


def cmd_zones_ensure(args: argparse.Namespace) -> int:
    """Seed the catalog on first start; re-sync families whose file changed since."""
    from alertstation.zones.service import ensure_catalog

    settings, engine = _station()
    try:
        report = ensure_catalog(engine, settings, progress=ProgressLine())
    finally:
        engine.dispose()
    if report is None:
        print("zone catalog up to date; nothing to do")
        return EXIT_OK
    for line in report.lines():
        print(line)
    print(f"zone catalog synced (generation {report.generation})")
    return EXIT_OK


def add_zones_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``zones sync``, ``zones ensure`` and ``zones download`` on the sub-parsers."""
    from alertstation.zones.download import add_download_command

    description = "Manage the zone catalog (public, marine and fire-weather zones, counties)."
    zones = sub.add_parser("zones", help="Manage the zone catalog.", description=description)
    zones_sub = zones.add_subparsers(
        dest="zones_command", metavar="ACTION", parser_class=type(zones)
    )
    zones_sub.required = True

    sync_help = "Apply zone DBF files to the catalog in one transaction."
    sync = zones_sub.add_parser(
        "sync",
        help=sync_help,
        description=sync_help + " Without --dbf-path every family found by the resolver "
        "(WX_ZONE_DBF_PATH, then the newest file per family in the assets directory) is applied.",
    )
    sync.add_argument(
        "--dbf-path",
        action="append",
        type=Path,
        metavar="PATH",
        help="apply this file (family from its name: z_, mz, oz_, fz_, cs); may be repeated",
    )
    sync.set_defaults(func=cmd_zones_sync)

    ensure_help = "Seed the catalog on first start; re-sync families whose file changed."
    ensure = zones_sub.add_parser("ensure", help=ensure_help, description=ensure_help)
    ensure.set_defaults(func=cmd_zones_ensure)

    add_download_command(zones_sub)
