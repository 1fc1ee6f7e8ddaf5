"""Back the station up while it runs, and restore it.

An archive is a gzipped tar, written 0600, holding:

``manifest.json``
    version, schema revision, backend, time, the row count of every table, whether keys are in.
``audit-checkpoints.log``
    the worker's audit checkpoint log, copied *before* the database, so every checkpoint in it
    describes rows the database copy holds.
``database.sqlite3`` or ``database.pgdump``
    a consistent copy: SQLite's online backup API, or ``pg_dump -Fc`` on a snapshot exported
    from the transaction that counted the rows (so counts and dump agree).
``keys/secret_key``, ``keys/audit_ledger_key``
    only when asked (``--include-keys``): with them a restore on another machine verifies.

The archive holds password hashes (and, with keys, what signs sessions and the ledger): keep it
like the station's own disk. :func:`restore_archive` puts the database back, restores the
checkpoint log of the backup and sets aside the checkpoints the station logged after it, which
it reports as "after this backup" (they describe rows the backup does not have; they are not
evidence of tampering).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, text

from alertstation.audit.service import CHECKPOINT_FILE, checkpoint_log_path
from alertstation.db.migrate import alembic_config, current_revision
from alertstation.settings import LEDGER_KEY_FILE, SECRET_KEY_FILE, Settings
from alertstation.version import __version__

FORMAT: Final[int] = 1
MANIFEST: Final[str] = "manifest.json"
SQLITE_COPY: Final[str] = "database.sqlite3"
PG_DUMP: Final[str] = "database.pgdump"
KEYS_DIR: Final[str] = "keys"
DUMP_TIMEOUT_SECONDS: Final[float] = 3600.0
HASH_WARNING: Final[str] = (
    "The archive holds the accounts' password hashes and every audit row: store it as "
    "carefully as the station itself."
)


class BackupError(RuntimeError):
    """A backup or restore could not be made; the message says why."""


@dataclass(frozen=True)
class BackupReport:
    """What a backup wrote."""

    path: Path
    backend: str
    revision: str | None
    row_counts: dict[str, int]
    includes_keys: bool
    checkpoints: int

    def lines(self) -> list[str]:
        """Return the summary an operator reads."""
        rows = sum(self.row_counts.values())
        keys = "with keys" if self.includes_keys else "without keys"
        return [
            f"wrote {self.path} ({self.backend}, schema {self.revision}, {keys})",
            f"{len(self.row_counts)} tables, {rows} rows, "
            f"audit_logs {self.row_counts.get('audit_logs', 0)} rows, "
            f"{self.checkpoints} audit checkpoint(s)",
            HASH_WARNING,
        ]


@dataclass
class RestoreReport:
    """What a restore did."""

    backend: str
    revision: str | None
    row_counts: dict[str, int]
    keys_restored: bool
    after_backup: list[str] = field(default_factory=list)
    after_backup_file: Path | None = None

    def lines(self) -> list[str]:
        """Return the summary an operator reads."""
        lines = [
            f"restored {sum(self.row_counts.values())} rows in {len(self.row_counts)} tables "
            f"({self.backend}, schema {self.revision}); row counts match the backup",
            "keys restored" if self.keys_restored else "keys kept (the archive holds none)",
        ]
        if self.after_backup:
            lines.append(
                f"{len(self.after_backup)} audit checkpoint(s) were logged after this backup; "
                f"they describe rows the backup does not hold, set aside in "
                f"{self.after_backup_file}"
            )
        return lines


def _backend(engine: Engine) -> str:
    return engine.dialect.name


def _count_rows(conn: Any, tables: list[str]) -> dict[str, int]:
    preparer = conn.dialect.identifier_preparer
    return {
        name: int(conn.execute(text(f"SELECT COUNT(*) FROM {preparer.quote(name)}")).scalar_one())
        for name in sorted(tables)
    }


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, mode: int = 0o600) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    archive.addfile(info, io.BytesIO(data))


def _pg_command_env(engine: Engine) -> tuple[str, dict[str, str]]:
    """Return a connection URL without the password and an environment carrying it."""
    url = engine.url.set(drivername="postgresql")
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    return url.set(password=None).render_as_string(hide_password=False), env


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    try:
        result = subprocess.run(
            command, env=env, capture_output=True, timeout=DUMP_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as ex:
        raise BackupError(f"{what} could not run: {ex}") from ex
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BackupError(f"{what} failed: {detail[-1] if detail else result.returncode}")


@contextmanager
def _database_copy(engine: Engine, folder: Path) -> Iterator[tuple[Path, dict[str, int]]]:
    """Yield a consistent copy of the database in ``folder`` and the row counts it holds."""
    tables = inspect(engine).get_table_names()
    if _backend(engine) == "sqlite":
        copy = folder / SQLITE_COPY
        source = sqlite3.connect(str(engine.url.database))
        target = sqlite3.connect(str(copy))
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        with make_sqlite_engine(copy).connect() as conn:
            counts = _count_rows(conn, tables)
        yield copy, counts
        return
    if shutil.which("pg_dump") is None:
        raise BackupError("pg_dump is not installed (Debian package postgresql-client)")
    dump = folder / PG_DUMP
    url, env = _pg_command_env(engine)
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            snapshot = conn.execute(text("SELECT pg_export_snapshot()")).scalar_one()
            counts = _count_rows(conn, tables)
            command = ["pg_dump", "-Fc", "--no-owner", f"--snapshot={snapshot}"]
            _run([*command, "-f", str(dump), "--dbname", url], env, "pg_dump")
    yield dump, counts


def make_sqlite_engine(path: Path) -> Engine:
    """Return a plain engine on a SQLite file (for reading a copy)."""
    return create_engine(f"sqlite:///{path}")


def write_backup(
    settings: Settings, engine: Engine, out: Path, *, include_keys: bool, now: datetime
) -> BackupReport:
    """Write an archive of the running station to ``out`` (0600); see the module docstring."""
    out = Path(out)
    if out.exists() and out.is_dir():
        raise BackupError(f"{out} is a folder; name the archive file")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="alertstation-backup-") as work:
        folder = Path(work)
        log_path = checkpoint_log_path(settings.data_dir)
        log = log_path.read_bytes() if log_path.is_file() else b""
        revision = current_revision(engine)
        with _database_copy(engine, folder) as (copy, counts):
            manifest: dict[str, Any] = {
                "format": FORMAT,
                "version": __version__,
                "revision": revision,
                "backend": _backend(engine),
                "created_at": now.isoformat(),
                "row_counts": counts,
                "includes_keys": include_keys,
                "database": copy.name,
                "warning": HASH_WARNING,
            }
            keys = _keys(settings) if include_keys else {}
            _write_archive(out, manifest, log, copy, keys)
    return BackupReport(
        path=out,
        backend=_backend(engine),
        revision=revision,
        row_counts=counts,
        includes_keys=include_keys,
        checkpoints=sum(1 for line in log.decode("utf-8", "replace").splitlines() if line.strip()),
    )


def _keys(settings: Settings) -> dict[str, bytes]:
    return {
        SECRET_KEY_FILE: settings.secret_key.encode(),
        LEDGER_KEY_FILE: settings.audit_ledger_key.encode(),
    }


def _write_archive(
    out: Path, manifest: dict[str, Any], log: bytes, copy: Path, keys: dict[str, bytes]
) -> None:
    """Write the archive beside ``out`` with mode 0600, then move it into place."""
    partial = out.with_name(f".{out.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            _add_bytes(tar, MANIFEST, json.dumps(manifest, indent=2).encode())
            _add_bytes(tar, CHECKPOINT_FILE, log)
            with copy.open("rb") as data:
                info = tarfile.TarInfo(copy.name)
                info.size = copy.stat().st_size
                info.mode = 0o600
                tar.addfile(info, data)
            for name, value in keys.items():
                _add_bytes(tar, f"{KEYS_DIR}/{name}", value)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _read_archive(path: Path, folder: Path) -> dict[str, Any]:
    """Unpack the known members of the archive at ``path`` into ``folder``; return the manifest."""
    allowed = {MANIFEST, CHECKPOINT_FILE, SQLITE_COPY, PG_DUMP}
    allowed |= {f"{KEYS_DIR}/{SECRET_KEY_FILE}", f"{KEYS_DIR}/{LEDGER_KEY_FILE}"}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                if member.name not in allowed or not member.isfile():
                    raise BackupError(f"{path} holds an unexpected member {member.name!r}")
                source = tar.extractfile(member)
                assert source is not None
                target = folder / member.name
                target.parent.mkdir(exist_ok=True)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
    except (tarfile.TarError, OSError, EOFError) as ex:
        raise BackupError(f"{path} is not a readable backup archive: {ex}") from ex
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as ex:
        raise BackupError(f"{path} has no readable manifest") from ex
    if manifest.get("format") != FORMAT or not (folder / manifest.get("database", "")).is_file():
        raise BackupError(f"{path} is not a backup of this format (format {FORMAT})")
    return dict(manifest)


def _restore_database(engine: Engine, manifest: dict[str, Any], folder: Path) -> None:
    backend = _backend(engine)
    if manifest["backend"] != backend:
        raise BackupError(
            f"the archive is a {manifest['backend']} backup; this station uses {backend}"
        )
    if backend == "sqlite":
        engine.dispose()
        path = Path(str(engine.url.database))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600, exist_ok=True)
        os.chmod(path, 0o600)  # it holds password hashes: the station's account only
        source = sqlite3.connect(str(folder / SQLITE_COPY))
        target = sqlite3.connect(str(path))
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
        return
    if shutil.which("pg_restore") is None:
        raise BackupError("pg_restore is not installed (Debian package postgresql-client)")
    engine.dispose()
    url, env = _pg_command_env(engine)
    command = ["pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction"]
    _run([*command, "--dbname", url, str(folder / PG_DUMP)], env, "pg_restore")


def _check_revision_known(engine: Engine, manifest: dict[str, Any]) -> None:
    """Refuse, before anything changes, a backup whose schema this release does not know."""
    revision = manifest.get("revision")
    if revision is None:
        return
    script = ScriptDirectory.from_config(alembic_config(engine))
    if revision not in {rev.revision for rev in script.walk_revisions()}:
        raise BackupError(
            f"the backup's schema revision {revision} is unknown to this release "
            f"({__version__}); it was made by a newer one: install that release, then restore"
        )


def _restore_keys(settings: Settings, folder: Path) -> bool:
    keys = folder / KEYS_DIR
    if not keys.is_dir():
        return False
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    for name in (SECRET_KEY_FILE, LEDGER_KEY_FILE):
        target = settings.data_dir / name
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write((keys / name).read_bytes())
    return True


def _restore_checkpoints(settings: Settings, folder: Path, now: datetime) -> tuple[list[str], Path]:
    """Put the backup's checkpoint log back; set aside (and return) the lines logged after it."""
    log_path = checkpoint_log_path(settings.data_dir)
    backed_up = (folder / CHECKPOINT_FILE).read_text(encoding="utf-8", errors="replace")
    kept = set(backed_up.splitlines())
    current = log_path.read_text(encoding="utf-8", errors="replace") if log_path.is_file() else ""
    after = [line for line in current.splitlines() if line.strip() and line not in kept]
    aside = log_path.with_name(f"{log_path.name}.after-backup-{now:%Y%m%dT%H%M%SZ}")
    if after:
        aside.write_text("\n".join(after) + "\n", encoding="utf-8")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(backed_up, encoding="utf-8")
    return after, aside


def restore_archive(
    settings: Settings, engine: Engine, archive: Path, *, now: datetime
) -> RestoreReport:
    """Restore the database, keys (when the archive has them) and checkpoint log of ``archive``.

    Raises BackupError for an unreadable archive, another backend, or row counts that do not
    match the manifest after the restore.
    """
    with tempfile.TemporaryDirectory(prefix="alertstation-restore-") as work:
        folder = Path(work)
        manifest = _read_archive(Path(archive), folder)
        _check_revision_known(engine, manifest)
        _restore_database(engine, manifest, folder)
        expected: dict[str, int] = {k: int(v) for k, v in manifest["row_counts"].items()}
        with engine.connect() as conn:
            found = _count_rows(conn, list(expected))
        wrong = sorted(name for name in expected if found.get(name) != expected[name])
        if wrong:
            details = ", ".join(f"{n} {found.get(n)} (backup {expected[n]})" for n in wrong)
            raise BackupError(f"row counts differ after the restore: {details}")
        keys = _restore_keys(settings, folder)
        after, aside = _restore_checkpoints(settings, folder, now)
    return RestoreReport(
        backend=manifest["backend"],
        revision=manifest.get("revision"),
        row_counts=found,
        keys_restored=keys,
        after_backup=after,
        after_backup_file=aside if after else None,
    )
