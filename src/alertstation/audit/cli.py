"""The ``alertstation audit`` sub-commands."""

from __future__ import annotations

import argparse
from typing import Any

from alertstation.commands import CommandError

EXIT_OK = 0
EXIT_BROKEN = 1


def _station_parts() -> tuple[Any, Any]:
    """Return (settings, engine) for a command, refusing a database that needs migrating."""
    from alertstation.commands import load_settings
    from alertstation.db.engine import make_engine
    from alertstation.db.migrate import pending_revisions

    settings = load_settings()  # finishes a restore that was killed mid-switch first
    engine = make_engine(settings.database_url)
    pending = pending_revisions(engine)
    if pending:
        raise CommandError(
            f"the database schema is {len(pending)} migration(s) behind; "
            "run `alertstation migrate` first"
        )
    return settings, engine


def _failed(problem: str) -> int:
    print(f"FAILED: {problem}")
    return EXIT_BROKEN


def cmd_audit_verify(args: argparse.Namespace) -> int:
    """Walk the ledger chain against a checkpoint; print ``ok N rows`` or ``FAILED: ...``.

    Without ``--checkpoint`` the newest line of the worker's own checkpoint log is used, so rows
    deleted after it was written are found; when there is no log the output says that deleted
    rows cannot be detected. Exit 0 when intact, 1 when not (or the ledger cannot be read), 2
    when a checkpoint given on the command line is garbled or forged.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from alertstation.audit.ledger import AuditLedger
    from alertstation.audit.service import (
        checkpoint_log_path,
        database_problem,
        load_checkpoint,
        newest_logged_checkpoint,
    )

    try:
        settings, engine = _station_parts()
    except SQLAlchemyError as ex:
        return _failed(f"the database could not be opened: {_first_line(ex)}")
    ledger = AuditLedger(settings.audit_ledger_key)
    note = ""
    if args.checkpoint:
        checkpoint: str | None = load_checkpoint(args.checkpoint)
        try:
            mark = ledger.parse_checkpoint(checkpoint)
        except ValueError as ex:
            raise ValueError(f"checkpoint rejected: {ex}") from None
        origin = ""
    elif args.no_checkpoint_log:
        checkpoint, mark = None, None
        note = "; no checkpoint used (--no-checkpoint-log): cannot detect deleted rows"
    else:
        log_path = checkpoint_log_path(settings.data_dir)
        checkpoint = newest_logged_checkpoint(log_path)
        mark = None
        if checkpoint is None:
            note = f"; no checkpoint log ({log_path}): cannot detect deleted rows"
        else:
            try:
                mark = ledger.parse_checkpoint(checkpoint)
            except ValueError as ex:
                engine.dispose()
                return _failed(f"the newest line of the checkpoint log {log_path} is bad: {ex}")
        origin = f" from {log_path}"
    try:
        result = ledger.verify_now(engine, checkpoint)
    except SQLAlchemyError as ex:
        return _failed(database_problem(engine, ex))
    finally:
        engine.dispose()
    if not result.ok:
        return _failed(f"{result.problem}; {result.rows} row(s) before it are intact")
    held = f" (checkpoint of {mark.count} rows at id {mark.last_id}{origin} holds)" if mark else ""
    print(result.summary() + held + note)
    return EXIT_OK


def _first_line(ex: BaseException) -> str:
    cause = getattr(ex, "orig", None) or ex
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0][:300] if lines else ''}".rstrip(": ")


def cmd_audit_head(args: argparse.Namespace) -> int:
    """Print a signed checkpoint of the ledger head to keep somewhere else."""
    from sqlalchemy.exc import SQLAlchemyError

    from alertstation.audit.ledger import AuditLedger
    from alertstation.audit.service import database_problem

    try:
        settings, engine = _station_parts()
    except SQLAlchemyError as ex:
        return _failed(f"the database could not be opened: {_first_line(ex)}")
    try:
        print(AuditLedger(settings.audit_ledger_key).checkpoint_now(engine))
    except SQLAlchemyError as ex:
        return _failed(database_problem(engine, ex))
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

    verify_help = (
        "Verify the chain against the newest checkpoint, so deleted rows are found: by default "
        "the worker's log <data dir>/audit-checkpoints.log, or --checkpoint."
    )
    verify = audit_sub.add_parser("verify", help=verify_help, description=verify_help)
    source = verify.add_mutually_exclusive_group()
    source.add_argument(
        "--checkpoint",
        metavar="FILE_OR_STRING",
        help="a checkpoint printed by `audit head`, or a file of them (the newest line is used)",
    )
    source.add_argument(
        "--no-checkpoint-log",
        action="store_true",
        help="check the chain only (deleted rows then cannot be detected)",
    )
    verify.set_defaults(func=cmd_audit_verify)

    head_help = "Print a signed checkpoint (row count, last id, head hash) to keep off the box."
    head = audit_sub.add_parser("head", help=head_help, description=head_help)
    head.set_defaults(func=cmd_audit_head)
