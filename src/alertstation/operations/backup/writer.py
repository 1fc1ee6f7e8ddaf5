"""Write a backup of the running station.

Members: ``manifest.json`` (version, schema revision, backend, time, the row count of every
table, which station signed the ledger, whether keys and secrets are in, every member's size and
SHA-256), ``manifest.mac``, ``audit-checkpoints.log`` (copied *before* the database, so every
checkpoint in it describes rows the copy holds), ``database.sqlite3`` (SQLite's online backup
API) or ``database.pgdump`` (``pg_dump -Fc`` on a snapshot exported by the transaction that
counted the rows), ``redacted-rows.json`` in an operator's backup, and ``keys/*`` on request.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine, create_engine, inspect, text

from alertstation.audit.service import CHECKPOINT_FILE, checkpoint_log_path
from alertstation.db.migrate import current_revision
from alertstation.operations.backup.archive import (
    BACKUP_KEY_FILE,
    FORMAT,
    KEYS_DIR,
    PG_DUMP,
    REDACTED_ROWS,
    SQLITE_COPY,
    BackupError,
    backup_key,
    station_id,
    write_archive,
)
from alertstation.operations.backup.redaction import LEFT_OUT, REDACTED_TABLES, redacted_rows
from alertstation.settings import LEDGER_KEY_FILE, SECRET_KEY_FILE, Settings
from alertstation.version import __version__
from alertstation.worker.upload_sweep import BACKUP_PREFIX

DUMP_TIMEOUT_SECONDS: Final[float] = 3600.0
HASH_WARNING: Final[str] = (
    "The archive holds the accounts' password hashes and every audit row: store it as "
    "carefully as the station itself."
)
REDACTED_NOTE: Final[str] = (
    "The archive holds every audit row but no password hashes, session tokens or stored "
    "secrets; restoring it keeps the station's own accounts and secrets."
)


@dataclass(frozen=True)
class BackupReport:
    """What a backup wrote."""

    path: Path
    backend: str
    revision: str | None
    row_counts: dict[str, int]
    includes_keys: bool
    includes_secrets: bool
    checkpoints: int

    def lines(self) -> list[str]:
        """Return the summary an operator reads."""
        rows = sum(self.row_counts.values())
        keys = "with keys" if self.includes_keys else "without keys"
        secrets = "with secrets" if self.includes_secrets else "secrets left out"
        return [
            f"wrote {self.path} ({self.backend}, schema {self.revision}, {keys}, {secrets})",
            f"{len(self.row_counts)} tables, {rows} rows, "
            f"audit_logs {self.row_counts.get('audit_logs', 0)} rows, "
            f"{self.checkpoints} audit checkpoint(s)",
            HASH_WARNING if self.includes_secrets else REDACTED_NOTE,
        ]


def count_rows(conn: Connection, tables: list[str]) -> dict[str, int]:
    """Return the row count of each table."""
    preparer = conn.dialect.identifier_preparer
    return {
        name: int(conn.execute(text(f"SELECT COUNT(*) FROM {preparer.quote(name)}")).scalar_one())
        for name in sorted(tables)
    }


def pg_command_env(engine: Engine) -> tuple[str, dict[str, str]]:
    """Return a connection URL without the password and an environment carrying it."""
    url = engine.url.set(drivername="postgresql")
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    return url.set(password=None).render_as_string(hide_password=False), env


def run_tool(command: list[str], env: dict[str, str] | None, what: str) -> bytes:
    """Run a PostgreSQL client tool; return its stdout or raise BackupError with its last line."""
    if shutil.which(command[0]) is None:
        raise BackupError(f"{command[0]} is not installed (Debian package postgresql-client)")
    try:
        result = subprocess.run(
            command, env=env, capture_output=True, timeout=DUMP_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise BackupError(f"{what} could not run: {ex}") from ex
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BackupError(f"{what} failed: {detail[-1] if detail else result.returncode}")
    return result.stdout


def make_sqlite_engine(path: Path) -> Engine:
    """Return a plain engine on a SQLite file (for reading a copy)."""
    return create_engine(f"sqlite:///{path}")


@contextmanager
def _database_copy(
    engine: Engine, folder: Path, secrets: bool
) -> Iterator[tuple[Path, dict[str, int], dict[str, Any] | None]]:
    """Yield a consistent copy, the row counts it holds and (secrets left out) the redacted rows."""
    tables = inspect(engine).get_table_names()
    if engine.dialect.name == "sqlite":
        copy = folder / SQLITE_COPY
        source = sqlite3.connect(str(engine.url.database))
        target = sqlite3.connect(str(copy))
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        plain = make_sqlite_engine(copy)
        try:
            with plain.begin() as conn:
                counts = count_rows(conn, tables)
                redacted = None if secrets else redacted_rows(conn)
                if redacted is not None:
                    for table in redacted:
                        conn.execute(text(f'DELETE FROM "{table}"'))
            if redacted is not None:
                with plain.connect() as conn:
                    conn.exec_driver_sql("VACUUM")  # no deleted secret stays in a free page
        finally:
            plain.dispose()
        yield copy, _with_redacted(counts, redacted), redacted
        return
    dump = folder / PG_DUMP
    url, env = pg_command_env(engine)
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            snapshot = conn.execute(text("SELECT pg_export_snapshot()")).scalar_one()
            counts = count_rows(conn, tables)
            redacted = None if secrets else redacted_rows(conn)
            command = ["pg_dump", "-Fc", "--no-owner", "--no-privileges", f"--snapshot={snapshot}"]
            for table in redacted or ():
                command.append(f"--exclude-table-data=public.{table}")
            run_tool([*command, "-f", str(dump), "--dbname", url], env, "pg_dump")
    yield dump, _with_redacted(counts, redacted), redacted


def _with_redacted(counts: dict[str, int], redacted: dict[str, Any] | None) -> dict[str, int]:
    if redacted is None:
        return counts
    return {**counts, **{table: len(redacted[table]["rows"]) for table in redacted}}


def write_backup(
    settings: Settings,
    engine: Engine,
    out: Path,
    *,
    include_keys: bool,
    now: datetime,
    include_secrets: bool = True,
) -> BackupReport:
    """Write an archive of the running station to ``out`` (0600); see the module docstring.

    ``include_secrets=False`` (an operator's backup) leaves out password hashes, session tokens
    and stored secrets; keys need secrets.
    """
    out = Path(out)
    if out.exists() and out.is_dir():
        raise BackupError(f"{out} is a folder; name the archive file")
    if include_keys and not include_secrets:
        raise BackupError("a backup with keys also holds the secrets")
    out.parent.mkdir(parents=True, exist_ok=True)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    key = backup_key(settings)
    folder = Path(tempfile.mkdtemp(prefix=BACKUP_PREFIX, dir=settings.data_dir))
    try:
        log_path = checkpoint_log_path(settings.data_dir)
        log = log_path.read_bytes() if log_path.is_file() else b""
        (folder / CHECKPOINT_FILE).write_bytes(log)
        revision = current_revision(engine)
        with _database_copy(engine, folder, include_secrets) as (copy, counts, redacted):
            members = {CHECKPOINT_FILE: folder / CHECKPOINT_FILE, copy.name: copy}
            if redacted is not None:
                (folder / REDACTED_ROWS).write_text(json.dumps(redacted))
                members[REDACTED_ROWS] = folder / REDACTED_ROWS
            if include_keys:
                (folder / KEYS_DIR).mkdir()
                keys = {
                    SECRET_KEY_FILE: settings.secret_key,
                    LEDGER_KEY_FILE: settings.audit_ledger_key,
                    BACKUP_KEY_FILE: key.decode(),
                }
                for name, value in keys.items():
                    (folder / KEYS_DIR / name).write_text(value)
                    members[f"{KEYS_DIR}/{name}"] = folder / KEYS_DIR / name
            manifest: dict[str, Any] = {
                "format": FORMAT,
                "version": __version__,
                "revision": revision,
                "backend": engine.dialect.name,
                "created_at": now.isoformat(),
                "row_counts": counts,
                "station": station_id(settings.audit_ledger_key),
                "includes_keys": include_keys,
                "includes_secrets": include_secrets,
                "left_out": [] if include_secrets else list(LEFT_OUT),
                "redacted_tables": [] if include_secrets else sorted(redacted or {}),
                "database": copy.name,
                "warning": HASH_WARNING if include_secrets else REDACTED_NOTE,
            }
            write_archive(out, manifest, members, key)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return BackupReport(
        path=out,
        backend=engine.dialect.name,
        revision=revision,
        row_counts=counts,
        includes_keys=include_keys,
        includes_secrets=include_secrets,
        checkpoints=sum(1 for line in log.decode("utf-8", "replace").splitlines() if line.strip()),
    )


__all__ = ["REDACTED_TABLES", "BackupReport", "write_backup"]
