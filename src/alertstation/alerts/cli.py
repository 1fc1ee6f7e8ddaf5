"""The ``alertstation alerts`` sub-commands: ``import`` and ``list``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from alertstation.commands import CommandError, open_database

if TYPE_CHECKING:
    from sqlalchemy import Engine

EXIT_OK = 0
EXIT_PARTIAL = 1


def _engine() -> Engine:
    """Return the station's engine, refusing a database that still needs migrating."""
    return open_database()[1]


def cmd_alerts_import(args: argparse.Namespace) -> int:
    """Import CAP XML or JSON feed files; print one line per alert with its state."""
    from alertstation.alerts.bulk import import_messages
    from alertstation.alerts.service import ImportProblem
    from alertstation.alerts.trust import trust_for

    settings, engine = open_database()
    trust = trust_for(settings)
    problems = 0
    try:
        for path in args.files:
            try:
                data = Path(path).read_bytes()
            except OSError as ex:
                raise CommandError(f"cannot read {path}: {ex.strerror or ex}") from ex
            alerts, links = 0, []
            for result in import_messages(engine, data, str(path), explicit=True, trust=trust):
                if isinstance(result, ImportProblem) and result.link:
                    links.append(result.link)  # an index entry: not a failure
                elif isinstance(result, ImportProblem):
                    problems += 1
                    print(f"skipped {result.source}: {result.reason}")
                else:
                    alerts += 1
                    area = "in-area" if result.in_area else "out-of-area"
                    print(f"{result.identifier} {result.outcome} {result.state} {area}")
            if links:
                print(link_only_summary(path, alerts, links))
    finally:
        engine.dispose()
    return EXIT_PARTIAL if problems else EXIT_OK


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
            f"sent={row.sent.isoformat()} expires={expires} {row.event}"
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

    import_help = "Store alerts from CAP XML or JSON feed files, even outside the area."
    importer = alerts_sub.add_parser(
        "import",
        help=import_help,
        description=import_help + " Prints one line per alert: identifier, outcome (stored, "
        "duplicate), state and area. A message that cannot be parsed is reported and skipped; "
        "the exit status is then 1. Entries of an ATOM index that only link to their message "
        "are counted, not fetched (the poller fetches them), and are not a failure.",
    )
    importer.add_argument("files", nargs="+", type=Path, metavar="FILE")
    importer.set_defaults(func=cmd_alerts_import)

    list_help = "List active alerts, newest first."
    listing = alerts_sub.add_parser("list", help=list_help, description=list_help)
    listing.add_argument(
        "--all", action="store_true", help="include expired, cancelled and superseded alerts"
    )
    listing.set_defaults(func=cmd_alerts_list)
