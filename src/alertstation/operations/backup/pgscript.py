"""A PostgreSQL dump, read and replayed by the station itself.

``pg_restore --list`` shows what the dump holds; only the kinds of object the station's schema
has are accepted (no functions, triggers, extensions or anything else that runs code). The dump
is then turned into SQL (``pg_restore -f``) and read here: every ``COPY`` block is counted (the
manifest's row counts, the schema revision in ``alembic_version``, the audit ledger's head)
before anything changes, and replayed in **one transaction** of the station's own connection,
so the switch-over commits whole or not at all. Lines that would be client meta-commands are
refused (``\\restrict``/``\\unrestrict`` guards are skipped).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine

from alertstation.operations.backup.archive import BackupError
from alertstation.operations.backup.writer import run_tool

ALLOWED_KINDS: Final[frozenset[str]] = frozenset(
    {
        "TABLE",
        "TABLE DATA",
        "SEQUENCE",
        "SEQUENCE OWNED BY",
        "SEQUENCE SET",
        "DEFAULT",
        "CONSTRAINT",
        "FK CONSTRAINT",
        "INDEX",
        "COMMENT",
    }
)
_ENTRY = re.compile(r"^\d+; \d+ \d+ (?P<rest>.+)$")
_COPY = re.compile(r"^COPY (?P<table>\S+) \((?P<columns>.*)\) FROM stdin;$")
_GUARD = re.compile(r"^\\(un)?restrict [A-Za-z0-9]+$")


@dataclass
class DumpSummary:
    """What the data of a dump holds, counted before anything changes."""

    row_counts: dict[str, int] = field(default_factory=dict)
    revision: str | None = None
    audit_head: tuple[int, int | None, str | None] = (0, None, None)


def check_listing(dump: Path) -> None:
    """Refuse a dump that is not one or holds a kind of object the station never makes."""
    listing = run_tool(["pg_restore", "--list", str(dump)], None, "pg_restore --list")
    for line in listing.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.startswith(";"):
            continue
        match = _ENTRY.match(line)
        if match is None:
            raise BackupError(f"the database dump lists an unreadable entry: {line[:80]!r}")
        rest = match.group("rest")
        if not any(rest.startswith(f"{kind} ") for kind in ALLOWED_KINDS):
            raise BackupError(
                f"the database dump holds an object the station never makes: {rest[:80]!r}"
            )
        parts = rest.split()
        if "public" not in parts[:4] and not rest.startswith("COMMENT "):
            raise BackupError(f"the database dump holds an object outside public: {rest[:80]!r}")


def make_script(engine: Engine, dump: Path, out: Path) -> None:
    """Write the SQL of ``dump`` (dropping what it replaces first) to ``out``."""
    command = ["pg_restore", "--clean", "--if-exists", "--no-owner", "--no-privileges"]
    run_tool([*command, "-f", str(out), str(dump)], None, "pg_restore")


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def _table_of(copy_target: str) -> str:
    schema, _, table = copy_target.partition(".")
    if _unquote(schema) != "public" or not table:
        raise BackupError(f"the database dump copies into {copy_target!r}, outside public")
    return _unquote(table)


def walk(
    script: Path,
    on_sql: Callable[[str], None],
    on_copy: Callable[[str, str, list[str]], Callable[[str], None]],
) -> None:
    """Read ``script``: SQL between COPY blocks to ``on_sql``, each COPY's rows to a writer.

    ``on_copy(statement, table, columns)`` returns the function each data line goes to.
    """
    sql: list[str] = []
    with script.open(encoding="utf-8") as lines:
        for line in lines:
            stripped = line.rstrip("\n")
            match = _COPY.match(stripped)
            if match is not None:
                if sql:
                    on_sql("".join(sql))
                    sql = []
                columns = [_unquote(c.strip()) for c in match.group("columns").split(",")]
                write = on_copy(stripped[:-1], _table_of(match.group("table")), columns)
                for data in lines:
                    if data == "\\.\n" or data == "\\.":
                        break
                    write(data)
                else:
                    raise BackupError("the database dump ends inside its data")
                continue
            if stripped.startswith("\\"):
                if _GUARD.match(stripped):
                    continue
                raise BackupError("the database dump holds a client command; refused")
            sql.append(line)
    if sql:
        on_sql("".join(sql))


def summarise(script: Path) -> DumpSummary:
    """Count the rows of every table in ``script`` and read its revision and ledger head."""
    summary = DumpSummary()

    def on_copy(statement: str, table: str, columns: list[str]) -> Callable[[str], None]:
        summary.row_counts[table] = 0

        def count(line: str) -> None:
            summary.row_counts[table] += 1
            if table == "alembic_version":
                summary.revision = line.rstrip("\n").split("\t")[0]
            elif table == "audit_logs":
                values = line.rstrip("\n").split("\t")
                row_id = int(values[columns.index("id")])
                _, last, _ = summary.audit_head
                if last is None or row_id > last:
                    summary.audit_head = (0, row_id, values[columns.index("row_hash")])

        return count

    walk(script, lambda sql: None, on_copy)
    count, last, row_hash = summary.audit_head
    summary.audit_head = (summary.row_counts.get("audit_logs", 0), last, row_hash)
    return summary


def replay(conn: Connection, script: Path) -> None:
    """Run ``script`` on ``conn`` inside the caller's transaction."""
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    pending: list[Any] = []  # the COPY in progress: (its context manager, its writer)

    def finish(error: BaseException | None = None) -> None:
        while pending:
            manager, _ = pending.pop()
            if error is None:
                manager.__exit__(None, None, None)
            else:
                manager.__exit__(type(error), error, error.__traceback__)

    def on_sql(sql: str) -> None:
        finish()
        cursor.execute(sql)

    def on_copy(statement: str, table: str, columns: list[str]) -> Callable[[str], None]:
        finish()
        manager = cursor.copy(statement.replace(" FROM stdin", " FROM STDIN"))
        pending.append((manager, manager.__enter__()))
        return lambda line: pending[-1][1].write(line)

    try:
        walk(script, on_sql, on_copy)
        finish()
    except BaseException as ex:
        finish(ex)
        raise
    finally:
        cursor.close()
    # The script empties the search path for its session; the rest of the restore needs it.
    conn.exec_driver_sql("SELECT pg_catalog.set_config('search_path', '\"$user\", public', false)")


__all__ = ["DumpSummary", "check_listing", "make_script", "replay", "summarise"]
