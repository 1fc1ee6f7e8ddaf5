"""The ``alertstation poll`` command: ``poll --once`` and ``poll sources ...``.

``poll --once`` polls every enabled source now, whatever its schedule, and prints one line per
source (outcome, HTTP status, counts or the error); the exit status is 1 when every source
failed. On a terminal a progress line per finished source goes to standard error. Source
changes made here are audited like those made over HTTP (actor ``cli``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from alertstation.commands import CommandError, open_database

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from alertstation.alerts.poll.poller import PollOutcome
    from alertstation.settings import Settings

EXIT_OK = 0
EXIT_ALL_FAILED = 1


def _open() -> tuple[Settings, Engine]:
    return open_database()


def cmd_poll(args: argparse.Namespace) -> int:
    """Poll every enabled source once (``--once``); print one line per source."""
    from alertstation.alerts.poll.poller import poller_for

    if not args.once:
        raise CommandError("say --once to poll every enabled source now (or see poll sources)")
    settings, engine = _open()
    try:
        progress = _Progress(sys.stderr)
        poller = poller_for(engine, settings)
        outcomes = poller.poll_all(on_done=progress.done)
    finally:
        engine.dispose()
    if not outcomes:
        print("no enabled poll sources; add one with `alertstation poll sources add`")
        return EXIT_OK
    for outcome in outcomes:
        print(outcome.line())
    return EXIT_ALL_FAILED if all(not outcome.ok for outcome in outcomes) else EXIT_OK


class _Progress:
    """Write ``[k] name: outcome`` to a terminal as sources finish (nothing to a pipe)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.count = 0
        try:
            self.interactive = bool(stream.isatty())
        except (AttributeError, ValueError):
            self.interactive = False

    def done(self, outcome: PollOutcome) -> None:
        self.count += 1
        if self.interactive:
            self.stream.write(f"[{self.count}] {outcome.name}: {outcome.outcome}\n")
            self.stream.flush()


def cmd_sources_list(args: argparse.Namespace) -> int:
    """List the poll sources with their health."""
    from alertstation.alerts.poll.sources import health_of, list_sources, url_host
    from alertstation.db.types import utcnow

    _, engine = _open()
    try:
        with engine.connect() as conn:
            rows = list_sources(conn)
    finally:
        engine.dispose()
    if not rows:
        print("no poll sources; add one with `alertstation poll sources add`")
        return EXIT_OK
    now = utcnow()
    for row in rows:
        success = row.last_success_at.isoformat() if row.last_success_at else "never"
        print(
            f"{row.id:>4} {row.name} [{row.kind}] {url_host(row.url)} {health_of(row, now)} "
            f"every {row.interval_seconds}s last-success={success} "
            f"failures={row.consecutive_failures}"
        )
    return EXIT_OK


def _change(args: argparse.Namespace, work: Any) -> int:
    """Run ``work(conn, ledger, actor, now)`` in one write transaction; print what it returns."""
    from alertstation.audit.actor import Actor
    from alertstation.audit.ledger import AuditLedger
    from alertstation.db.engine import begin_write
    from alertstation.db.types import utcnow

    settings, engine = _open()
    try:
        ledger = AuditLedger(settings.audit_ledger_key)
        with begin_write(engine) as conn:
            message = work(conn, ledger, Actor.system("cli"), utcnow())
    finally:
        engine.dispose()
    print(message)
    return EXIT_OK


def cmd_sources_add(args: argparse.Namespace) -> int:
    """Add a poll source; it is polled at the worker's next look."""
    from alertstation.alerts.poll.sources import audit_change, create_source, read_config

    body: dict[str, Any] = {"name": args.name, "kind": args.kind}
    optional = {
        "url": args.url,
        "area": args.area,
        "zones": args.zones,
        "interval_seconds": args.interval,
        "connect_timeout": args.connect_timeout,
        "read_timeout": args.read_timeout,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    if args.disabled:
        body["enabled"] = False
    config = read_config(body)

    def work(conn: Any, ledger: Any, actor: Any, now: Any) -> str:
        source_id = create_source(conn, config, now)
        fields = [key for key in body if key != "name"] + ["name"]
        audit_change(ledger, conn, actor, "created", source_id, config.name, fields)
        return f"added poll source {source_id}: {config.name} [{config.kind}]"

    return _change(args, work)


def cmd_sources_remove(args: argparse.Namespace) -> int:
    """Remove a poll source (by name or id)."""
    from alertstation.alerts.poll.sources import audit_change, delete_source, find_source

    def work(conn: Any, ledger: Any, actor: Any, now: Any) -> str:
        row = _find(find_source, conn, args.source)
        audit_change(ledger, conn, actor, "deleted", row.id, row.name, ["source"])
        delete_source(conn, row.id)
        return f"removed poll source {row.id}: {row.name}"

    return _change(args, work)


def _set_enabled(args: argparse.Namespace, enabled: bool) -> int:
    from dataclasses import replace

    from alertstation.alerts.poll.sources import (
        SourceConfig,
        audit_change,
        find_source,
        update_source,
    )

    def work(conn: Any, ledger: Any, actor: Any, now: Any) -> str:
        row = _find(find_source, conn, args.source)
        config = replace(SourceConfig.from_row(row), enabled=enabled)
        changed = update_source(conn, row.id, config, now)
        audit_change(ledger, conn, actor, "updated", row.id, row.name, changed)
        return f"poll source {row.id}: {row.name} {'enabled' if enabled else 'disabled'}"

    return _change(args, work)


def cmd_sources_enable(args: argparse.Namespace) -> int:
    """Enable a poll source; it is due at once."""
    return _set_enabled(args, True)


def cmd_sources_disable(args: argparse.Namespace) -> int:
    """Disable a poll source; it keeps its settings and health."""
    return _set_enabled(args, False)


def _find(find: Any, conn: Any, name_or_id: str) -> Any:
    try:
        return find(conn, name_or_id)
    except LookupError as ex:
        raise CommandError(str(ex)) from None


def add_poll_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``poll --once`` and ``poll sources ...`` on the top-level sub-parsers."""
    description = (
        "Poll the alert sources. --once polls every enabled source now and prints one line "
        "per source; the exit status is 1 when every source failed."
    )
    poll = sub.add_parser("poll", help="Poll alert sources; manage them.", description=description)
    poll.add_argument("--once", action="store_true", help="poll every enabled source now")
    poll.set_defaults(func=cmd_poll)
    poll_sub = poll.add_subparsers(dest="poll_command", metavar="ACTION", parser_class=type(poll))

    sources = poll_sub.add_parser(
        "sources", help="List, add and remove poll sources.", description="Manage poll sources."
    )
    sources_sub = sources.add_subparsers(
        dest="sources_command", metavar="ACTION", parser_class=type(poll)
    )
    sources_sub.required = True
    listing = sources_sub.add_parser("list", help="List sources with their health.")
    listing.set_defaults(func=cmd_sources_list)

    add_help = "Add a source (json-api by --area or --zones; cap-xml or ipaws by --url)."
    add = sources_sub.add_parser("add", help=add_help, description=add_help)
    add.add_argument("--name", required=True)
    add.add_argument("--kind", required=True, choices=("json-api", "cap-xml", "ipaws"))
    add.add_argument("--url", help="feed URL; for json-api the API base URL (optional)")
    add.add_argument("--area", help="json-api: state or marine area codes, e.g. VA,MD")
    add.add_argument("--zones", help="json-api: UGC zone codes, e.g. VAZ057,VAC059")
    add.add_argument("--interval", type=int, help="seconds between polls (default 60)")
    add.add_argument("--connect-timeout", type=float, help="seconds (default 5)")
    add.add_argument("--read-timeout", type=float, help="seconds (default 15)")
    add.add_argument("--disabled", action="store_true", help="add it without polling it yet")
    add.set_defaults(func=cmd_sources_add)

    for name, func, text in (
        ("remove", cmd_sources_remove, "Remove a source."),
        ("enable", cmd_sources_enable, "Enable a source (polled at once)."),
        ("disable", cmd_sources_disable, "Disable a source."),
    ):
        action = sources_sub.add_parser(name, help=text, description=text)
        action.add_argument("source", metavar="NAME_OR_ID")
        action.set_defaults(func=func)
