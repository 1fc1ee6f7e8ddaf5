"""The ``alertstation audit`` sub-commands."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK = 0
EXIT_BROKEN = 1


def _station_parts() -> tuple[Any, Any]:
    """Return (settings, engine) for a command, refusing a database that needs migrating."""
    from alertstation.cli import CommandError
    from alertstation.db.engine import make_engine
    from alertstation.db.migrate import pending_revisions
    from alertstation.logs import configure_logging
    from alertstation.settings import Settings

    settings = Settings.from_env()
    configure_logging(settings.log_level, "text" if sys.stderr.isatty() else settings.log_format)
    engine = make_engine(settings.database_url)
    pending = pending_revisions(engine)
    if pending:
        raise CommandError(
            f"the database schema is {len(pending)} migration(s) behind; "
            "run `alertstation migrate` first"
        )
    return settings, engine


def cmd_audit_verify(args: argparse.Namespace) -> int:
    """Walk the ledger chain; print ``ok N rows`` (exit 0) or the first bad row (exit 1)."""
    from alertstation.audit.ledger import AuditLedger
    from alertstation.audit.service import load_checkpoint

    settings, engine = _station_parts()
    ledger = AuditLedger(settings.audit_ledger_key)
    checkpoint = load_checkpoint(args.checkpoint) if args.checkpoint else None
    try:
        mark = ledger.parse_checkpoint(checkpoint) if checkpoint else None
    except ValueError as ex:
        raise ValueError(f"checkpoint rejected: {ex}") from None
    try:
        result = ledger.verify_now(engine, checkpoint)
    finally:
        engine.dispose()
    if not result.ok:
        print(f"FAILED: {result.problem}; {result.rows} row(s) before it are intact")
        return EXIT_BROKEN
    held = f" (checkpoint of {mark.count} rows at id {mark.last_id} holds)" if mark else ""
    print(result.summary() + held)
    return EXIT_OK


def cmd_audit_head(args: argparse.Namespace) -> int:
    """Print a signed checkpoint of the ledger head to keep somewhere else."""
    from alertstation.audit.ledger import AuditLedger

    settings, engine = _station_parts()
    try:
        print(AuditLedger(settings.audit_ledger_key).checkpoint_now(engine))
    finally:
        engine.dispose()
    return EXIT_OK


def add_audit_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``audit verify`` and ``audit head`` on the top-level sub-parsers."""
    description = "Check the tamper-evident audit ledger."
    audit = sub.add_parser("audit", help=description, description=description)
    audit_sub = audit.add_subparsers(
        dest="audit_command", metavar="ACTION", parser_class=type(audit)
    )
    audit_sub.required = True

    verify_help = "Verify the chain; with --checkpoint also prove no rows were cut off."
    verify = audit_sub.add_parser("verify", help=verify_help, description=verify_help)
    verify.add_argument(
        "--checkpoint",
        metavar="FILE_OR_STRING",
        help="a checkpoint printed by `audit head`, or a file of them (the newest line is used)",
    )
    verify.set_defaults(func=cmd_audit_verify)

    head_help = "Print a signed checkpoint (row count, last id, head hash) to keep off the box."
    head = audit_sub.add_parser("head", help=head_help, description=head_help)
    head.set_defaults(func=cmd_audit_head)
