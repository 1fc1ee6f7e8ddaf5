"""The ``alertstation alerts`` sub-commands: ``import`` and ``list``."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alertstation.commands import CommandError, open_database

if TYPE_CHECKING:
    from sqlalchemy import Engine

EXIT_OK = 0
EXIT_PARTIAL = 1


def _engine() -> Engine:
    """Return the station's engine, refusing a database that still needs migrating."""
    return open_database()[1]


def cmd_alerts_import(args: argparse.Namespace) -> int:
    """Import CAP XML or JSON feed files, folders of them, or archives of them.

    Prints one line per alert with its state. Every input is listed first (``import_inputs``)
    and read in turn. Alerts are stored in chunks (``alerts.ingest``), one transaction per chunk.
    A progress bar and a final summary go to stderr: the bar when stderr is a terminal or with
    --progress.
    """
    from alertstation.alerts.import_inputs import InputError, TooLarge, collect
    from alertstation.alerts.ingest import ChunkedImport, parse_body
    from alertstation.alerts.service import ImportProblem
    from alertstation.alerts.trust import trust_for

    settings, engine = open_database()
    trust = trust_for(settings)
    tally = ImportTally(started=time.monotonic())
    with contextlib.ExitStack() as stack:
        try:
            inputs = collect(args.files, stack)
        except InputError as ex:
            engine.dispose()
            raise CommandError(str(ex)) from ex
        tally.ignored = inputs.ignored
        bar = progress_bar(args.progress or sys.stderr.isatty())
        # The bar counts messages: stored ones as their chunk is written, problems at once.
        # Most archived bodies hold one message, so the total counts each unread input as one
        # and is corrected as each is parsed.
        bar.total = len(inputs.items)
        importer = ChunkedImport(engine, explicit=True, chunk=args.chunk, progress=bar.update)
        try:
            try:
                for done, entry in enumerate(inputs.items, start=1):
                    try:
                        items = parse_body(entry.read(), entry.source, trust=trust)
                    except TooLarge as ex:
                        items = [ImportProblem(entry.source, str(ex))]
                    except InputError as ex:
                        raise CommandError(str(ex)) from ex
                    tally.inputs += 1
                    tally.parsed += len(items)
                    bar.total = tally.parsed + len(inputs.items) - done
                    bar.update(sum(1 for item in items if _is_problem(item)))  # done already
                    for source, results in importer.add(entry.source, items):
                        tally.report(source, results)
            finally:
                for source, results in importer.flush():
                    tally.report(source, results)
                bar.close()
                print(tally.summary(time.monotonic()), file=sys.stderr)
        finally:
            engine.dispose()
    return EXIT_PARTIAL if tally.problems else EXIT_OK


def _positive(text: str) -> int:
    """Parse a positive whole number for --chunk."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def _is_problem(item: object) -> bool:
    from alertstation.alerts.service import ImportProblem

    return isinstance(item, ImportProblem)


def progress_bar(show: bool) -> Any:
    """Return a tqdm bar over messages on stderr (a silent one when ``show`` is false)."""
    from tqdm import tqdm

    return tqdm(total=0, unit="msg", desc="import", file=sys.stderr, disable=not show)


@dataclass
class ImportTally:
    """Count what an import did and print the per-alert lines."""

    started: float
    stored: int = 0
    duplicates: int = 0
    skipped: int = 0
    problems: int = 0
    inputs: int = 0  # files and archive members read
    parsed: int = 0  # messages parsed from them (problems too)
    ignored: int = 0  # folder entries and archive members not named like a message

    def report(self, source: str, results: list[Any]) -> None:
        """Print one line per alert of one source (and the link-only note); count them."""
        alerts, links = 0, []
        for result in results:
            if _is_problem(result) and result.link:
                links.append(result.link)  # an index entry: not a failure
                self.skipped += 1
            elif _is_problem(result):
                self.problems += 1
                print(f"skipped {result.source}: {result.reason}")
            else:
                alerts += 1
                self.stored += result.outcome == "stored"
                self.duplicates += result.outcome == "duplicate"
                self.skipped += result.outcome == "ignored"
                area = "in-area" if result.in_area else "out-of-area"
                print(f"{result.identifier} {result.outcome} {result.state} {area}")
        if links:
            print(link_only_summary(Path(source), alerts, links))

    def summary(self, now: float) -> str:
        """Say what was done: counts, inputs read, elapsed time and rate."""
        elapsed = max(now - self.started, 1e-9)
        messages = self.stored + self.duplicates + self.skipped + self.problems
        text = (
            f"{messages} message{'' if messages == 1 else 's'}: {self.stored} stored, "
            f"{self.duplicates} duplicate{'' if self.duplicates == 1 else 's'}, "
            f"{self.skipped} skipped, {self.problems} problem{'' if self.problems == 1 else 's'}"
            f" from {self.inputs} file{'' if self.inputs == 1 else 's'}"
            f" in {elapsed:.1f} s ({messages / elapsed:.0f} messages/s)"
        )
        if self.ignored:
            text += (
                f"; {self.ignored} other file{'' if self.ignored == 1 else 's'} ignored "
                "(not named like a message)"
            )
        return text


def link_only_summary(path: Path, alerts: int, links: list[str]) -> str:
    """Say that a feed's link-only entries were listed, not imported, and how to get them."""
    entries = f"{len(links)} link-only entr{'y' if len(links) == 1 else 'ies'}"
    return (
        f"{alerts} alert{'' if alerts == 1 else 's'} from {path}: the feed lists {entries} "
        f"(an ATOM index, e.g. {links[0]}); fetch them with the poller: "
        "alertstation poll sources add --kind cap-xml --name NAME --url FEED_URL"
    )


def cmd_alerts_list(args: argparse.Namespace) -> int:
    """List active alerts (all stored ones with --all), newest first."""
    from alertstation.alerts.service import list_alerts

    engine = _engine()
    try:
        with engine.connect() as conn:
            rows = list_alerts(conn, include_all=args.all)
    finally:
        engine.dispose()
    for row in rows:
        expires = row.expires.isoformat() if row.expires else "-"
        area = "in-area" if row.in_area else ("stored-area" if row.stored_area else "out-of-area")
        print(
            f"{row.identifier} {row.state} {row.event_code or '-'} {area} "
            f"sent={row.sent.isoformat()} expires={expires} {row.event or '-'}"
        )
    if not rows:
        print("no alerts" if args.all else "no active alerts")
    return EXIT_OK


def add_alerts_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``alerts import`` and ``alerts list`` on the top-level sub-parsers."""
    description = "Import and list stored CAP alerts."
    alerts = sub.add_parser("alerts", help="Import and list CAP alerts.", description=description)
    alerts_sub = alerts.add_subparsers(
        dest="alerts_command", metavar="ACTION", parser_class=type(alerts)
    )
    alerts_sub.required = True

    import_help = (
        "Store alerts from CAP XML or JSON feed files, folders of them or archives of them "
        "(.zip, .tar, .tar.gz), even outside the area."
    )
    importer = alerts_sub.add_parser(
        "import",
        help=import_help,
        description=import_help + " Prints one line per alert: identifier, outcome (stored, "
        "duplicate), state and area. A message that cannot be parsed is reported and skipped; "
        "the exit status is then 1. Entries of an ATOM index that only link to their message "
        "are counted, not fetched (the poller fetches them), and are not a failure. In folders "
        "and archives only files named *.xml, *.cap, *.atom, *.json or *.geojson are read "
        "(hidden files and links are passed over); nothing is extracted to disk. Alerts are "
        "stored in chunks of 1000, one transaction each; a progress bar (on a terminal or with "
        "--progress) and a final summary go to stderr.",
    )
    importer.add_argument("files", nargs="+", type=Path, metavar="PATH")
    importer.add_argument(
        "--chunk",
        type=_positive,
        default=None,
        metavar="N",
        help="alerts per write transaction (default 1000); a chunk is stored whole or not at all",
    )
    importer.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar on stderr even when it is not a terminal",
    )
    importer.set_defaults(func=cmd_alerts_import)

    list_help = "List active alerts, newest first."
    listing = alerts_sub.add_parser("list", help=list_help, description=list_help)
    listing.add_argument(
        "--all", action="store_true", help="include expired, cancelled and superseded alerts"
    )
    listing.set_defaults(func=cmd_alerts_list)
