"""The ``alertstation traffic`` sub-commands: import access logs into the request log."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from alertstation.commands import EXIT_FAILURE, CommandError

if TYPE_CHECKING:
    from alertstation.commands import OpenedDatabase

EXIT_OK = 0


def cmd_traffic_import(args: argparse.Namespace) -> int:
    """Import each FILE (a combined or JSON access log, maybe gzipped), with a progress bar."""
    from tqdm import tqdm

    from alertstation.security.geoip.lookup import locator_for
    from alertstation.traffic import geoip_paths
    from alertstation.traffic.agents import SLOW_RESOLVER, resolver_name
    from alertstation.traffic.importer import LogImport, oldest_first

    paths = [Path(name) for name in args.files]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise CommandError(f"no such file: {', '.join(missing)}")
    paths = oldest_first(paths, args.format)  # each day's rollups tallied once
    station = args.open_station()
    geoip_paths.attach(station.engine, station.settings.data_dir, station.clock)
    # Asking which resolver parses agents builds ua-parser's regex set (a quarter of a second):
    # only worth it when there are lines to read.
    if any(path.stat().st_size for path in paths) and resolver_name() == SLOW_RESOLVER:
        print(
            "note: user agents are read by ua-parser's pure-Python resolver (about 1 ms for each "
            "new agent); installing ua-parser-rs makes a large import several times faster",
            file=sys.stderr,
        )
    try:
        run = LogImport(
            station.engine, args.format, locator_for(station.settings.data_dir),
            now=station.clock(), every_line=args.all, keep_history=args.keep_history,
            site_hosts=args.site_hosts,
        )  # fmt: skip
        total = run.result
        barren: list[str] = []  # files with lines of which none is stored
        for path in paths:
            imported, present = total.imported, total.duplicates
            with tqdm(
                total=path.stat().st_size,
                desc=path.name,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=sys.stderr,
                disable=None,  # a bar on a terminal only
                **_bar_size(),
                leave=True,
            ) as bar:

                def advance(done: int, bar: tqdm = bar) -> None:  # type: ignore[type-arg]
                    bar.update(done - bar.n)

                try:
                    run.add_file(path, advance)
                except OSError as error:  # not readable at all (a damaged file is reported)
                    raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
            print(f"{path}: {total.imported - imported} rows imported")
            if total.imported == imported and total.duplicates == present and path.stat().st_size:
                barren.append(str(path))
        run.finish()  # the rollups of every file's days, tallied once
    finally:
        station.engine.dispose()
    hint = "; --all imports the lines the settings leave out" if total.filtered else ""
    print(total.as_text() + hint)
    for damage in total.damaged:
        print(f"error: {damage}", file=sys.stderr)
    for name in barren:
        print(
            f"error: {name}: no line was imported or already present (see the counts above)",
            file=sys.stderr,
        )
    return EXIT_FAILURE if total.damaged or barren else EXIT_OK


def _bar_size() -> dict[str, int]:
    """Return the progress bar's size when standard error is a terminal that does not tell its
    own (0 x 0), which tqdm takes as no room for a bar at all; else nothing (tqdm asks)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):  # not a terminal (no bar), or stderr closed or replaced
        return {}
    return {"ncols": size.columns or 80, "nrows": size.lines or 24}


def _site_host(text: str) -> str:
    """Read one ``--site-host`` (``settings.site_host_names``)."""
    from alertstation.traffic.settings import site_host_names

    try:
        return site_host_names([text])[0]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_traffic_commands(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    open_station: Callable[[], OpenedDatabase],
) -> None:
    """Register ``traffic import [--format combined|json] [--all] [--keep-history]
    [--site-host HOST]... FILE...`` on the parsers."""
    description = "Traffic analytics: import a reverse proxy's access logs."
    traffic = sub.add_parser("traffic", help=description, description=description)
    traffic_sub = traffic.add_subparsers(
        dest="traffic_command", metavar="ACTION", parser_class=type(traffic)
    )
    traffic_sub.required = True
    import_help = (
        "Import access logs (nginx or Apache combined, or JSON lines; .gz read gzipped) into the "
        "request log; importing a file again adds nothing."
    )
    importing = traffic_sub.add_parser("import", help=import_help, description=import_help)
    importing.add_argument(
        "--format",
        choices=("combined", "json"),
        default="combined",
        help="the log format (json: nginx, Caddy or Traefik)",
    )
    importing.add_argument(
        "--all",
        action="store_true",
        help="import every line, also those the collection settings leave out (internal "
        "addresses, API calls, skipped paths, bots), as GoAccess counts them; anonymize_ip "
        "still applies",
    )
    importing.add_argument(
        "--keep-history",
        action="store_true",
        help="also store the lines older than the retention (retention_days); the next hourly "
        "prune deletes them",
    )
    importing.add_argument(
        "--site-host",
        dest="site_hosts",
        metavar="HOST",
        action="append",
        type=_site_host,
        help="a host name of the site the log is of (repeat for more): a referrer on it is a "
        "self-referral, not counted; instead of the site_hosts setting",
    )
    importing.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="access log files, in any order (rotated logs such as access.log* are imported "
        "oldest first)",
    )
    importing.set_defaults(func=cmd_traffic_import, open_station=open_station)
