"""Finish or discard a restore that was killed while it switched the station over.

A restore validates everything in a staging folder first, then writes ``restore-pending.json``
in the data directory, switches the database in one step (one SQLite write transaction, one
PostgreSQL transaction) and moves the staged files (keys, checkpoint log) into place. The plan
names the audit ledger head of the restored database. Every command reads the plan at start
(``alertstation.commands.load_settings``) before it reads the keys: when the database holds the
restored head, the switch happened and the staged files are moved into place; when it does
not, the staged files are dropped. Either way the station is the old one or the new one, whole.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, create_engine, inspect, text
from sqlalchemy.exc import SQLAlchemyError

PLAN_FILE: Final[str] = "restore-pending.json"
RESOLVED: Final[tuple[str, ...]] = ("completed", "discarded")

log = logging.getLogger(__name__)

AuditHead = tuple[int, int | None, str | None]


def audit_head(conn: Connection) -> AuditHead:
    """Return the ledger's row count, last id and last row hash (0, None, None when empty)."""
    if "audit_logs" not in inspect(conn).get_table_names():
        return (0, None, None)
    count, last = conn.execute(text("SELECT COUNT(*), MAX(id) FROM audit_logs")).one()
    if last is None:
        return (int(count), None, None)
    row_hash = conn.execute(
        text("SELECT row_hash FROM audit_logs WHERE id = :id"), {"id": last}
    ).scalar_one()
    return (int(count), int(last), str(row_hash))


def write_plan(data_dir: Path, plan: dict[str, Any]) -> None:
    """Write the plan atomically (private file, flushed, renamed into place)."""
    target = data_dir / PLAN_FILE
    partial = data_dir / f".{PLAN_FILE}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(plan, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, target)


def read_plan(data_dir: Path) -> dict[str, Any] | None:
    """Return the pending plan, or None."""
    try:
        return dict(json.loads((data_dir / PLAN_FILE).read_text()))
    except FileNotFoundError:
        return None


def move_staged_files(data_dir: Path, plan: dict[str, Any]) -> None:
    """Move every staged file the plan names into place (idempotent)."""
    staging = data_dir / plan["staging"]
    for staged, target in plan["files"]:
        source = staging / staged
        if source.exists():
            os.replace(source, data_dir / target)


def drop_plan(data_dir: Path, plan: dict[str, Any]) -> None:
    """Remove the staging folder, any staged database file, then the plan itself."""
    shutil.rmtree(data_dir / plan["staging"], ignore_errors=True)
    for leftover in plan.get("leftovers", []):
        Path(leftover).unlink(missing_ok=True)
    (data_dir / PLAN_FILE).unlink(missing_ok=True)


def database_head(database_url: str) -> AuditHead | None:
    """Return the ledger head of the configured database; None when there is no database.

    Raises SQLAlchemyError when a database is there but cannot be read now.
    """
    if database_url.startswith("sqlite"):
        path = database_url.split("///", 1)[-1]
        if not Path(path).is_file():
            return None
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return audit_head(conn)
    finally:
        engine.dispose()


def finish_pending_restore(data_dir: Path, database_url: str) -> str | None:
    """Complete or discard a killed restore; return "completed", "discarded" or None.

    While the database cannot be read (a PostgreSQL server still starting), nothing is decided:
    the plan stays for the next command and "pending" is returned.
    """
    plan = read_plan(data_dir)
    if plan is None:
        return None
    try:
        head = database_head(database_url)
    except SQLAlchemyError as ex:
        log.warning(
            "a restore was interrupted; the database cannot be read to finish it: %s",
            str(ex).splitlines()[0] if str(ex) else type(ex).__name__,
        )
        return "pending"
    switched = head is not None and list(head) == list(plan["audit_head"])
    if switched:
        move_staged_files(data_dir, plan)
    drop_plan(data_dir, plan)
    outcome = "completed" if switched else "discarded"
    log.warning(
        "a restore was interrupted; it is now %s", outcome, extra={"archive": plan.get("archive")}
    )
    return outcome
