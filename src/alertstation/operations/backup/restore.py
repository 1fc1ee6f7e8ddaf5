"""Restore a backup: validate everything in a staging folder, then switch over as one step.

Steps (each a fault point for tests, ``fault(step)``):

1. refuse while the station runs (the worker's leader beat within ``STALE_AFTER``) unless
   ``force``;
2. unpack into ``<data dir>/.restore-*`` and validate there: members, paths and sizes against
   the manifest, the MAC (the station's backup key) and which station signed the ledger, keys
   (length and format), the database (SQLite ``integrity_check`` / the pg_dump listing and its
   data), the schema revision, the manifest's row counts and the newest checkpoint against the
   ledger key the station will have; an operator's backup gets the station's own accounts and
   secrets here (SQLite) or in the switching transaction (PostgreSQL) — ``staged``;
3. write the plan (``alertstation.db.restore_plan``) — ``planned``;
4. switch the database: the staged SQLite file copied over the live one in one write
   transaction (the backup API), or one PostgreSQL transaction that replays the dump and checks
   the counts before it commits — ``switched``;
5. move the staged keys and checkpoint log into place — ``moved``; drop the plan.

A kill before step 4 completes leaves the old station; after it, the next command completes
the file moves, so the new station is whole. Any refusal is one line and changes nothing.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, inspect
from sqlalchemy.exc import SQLAlchemyError

from alertstation.audit.ledger import AuditLedger
from alertstation.audit.service import CHECKPOINT_FILE, checkpoint_log_path, last_checkpoint_in
from alertstation.db.migrate import alembic_config, alembic_script
from alertstation.db.restore_plan import (
    audit_head,
    drop_plan,
    move_staged_files,
    write_plan,
)
from alertstation.operations.backup.archive import (
    BACKUP_KEY_FILE,
    KEY_FILES,
    KEYS_DIR,
    PG_DUMP,
    REDACTED_ROWS,
    SQLITE_COPY,
    BackupError,
    backup_key,
    mac_of,
    station_id,
    unpack,
)
from alertstation.operations.backup.pgscript import check_listing, make_script, replay, summarise
from alertstation.operations.backup.redaction import (
    ACCOUNT_TABLES,
    REDACTED_TABLES,
    capture_own,
    keep_own,
    put_back_redacted,
)
from alertstation.operations.backup.writer import count_rows, make_sqlite_engine
from alertstation.settings import LEDGER_KEY_FILE, MIN_SECRET_KEY_LENGTH, Settings
from alertstation.version import __version__
from alertstation.worker.heartbeat import STALE_AFTER, read_heartbeat
from alertstation.worker.upload_sweep import RESTORE_PREFIX

STEPS: Final[tuple[str, ...]] = ("staged", "planned", "switched", "moved")
MAX_KEY_LENGTH: Final[int] = 512
_KEY_FORMAT: Final = re.compile(r"[\x21-\x7e]+")
SCRIPT: Final[str] = "database.sql"

Fault = Callable[[str], None]


@dataclass
class RestoreReport:
    """What a restore did."""

    backend: str
    revision: str | None
    row_counts: dict[str, int]
    keys_restored: bool
    secrets_restored: bool = True
    after_backup: list[str] = field(default_factory=list)
    after_backup_file: Path | None = None

    def lines(self) -> list[str]:
        """Return the summary an operator reads."""
        lines = [
            f"restored {sum(self.row_counts.values())} rows in {len(self.row_counts)} tables "
            f"({self.backend}, schema {self.revision}); row counts match the backup",
            "keys restored" if self.keys_restored else "keys kept (the archive holds none)",
        ]
        if not self.secrets_restored:
            lines.append(
                "the archive holds no password hashes or secrets: the station's own accounts "
                "and secrets were kept"
            )
        if self.after_backup:
            lines.append(
                f"{len(self.after_backup)} audit checkpoint(s) were logged after this backup; "
                f"they describe rows the backup does not hold, set aside in "
                f"{self.after_backup_file}"
            )
        return lines


@dataclass
class Staged:
    """An archive unpacked and validated, ready to switch to."""

    folder: Path
    manifest: dict[str, Any]
    keys: dict[str, str]
    redacted: dict[str, Any] | None
    audit_head: list[Any]
    database: Path  # the SQLite copy beside the live file, or the SQL script of the dump


def refuse_while_running(engine: Engine, now: datetime, force: bool) -> None:
    """Refuse while the worker's leader heartbeat is fresh, unless ``force``."""
    if force:
        return
    try:
        with engine.connect() as conn:
            if "worker_heartbeat" not in inspect(conn).get_table_names():
                return
            beat = read_heartbeat(conn, now)
    except SQLAlchemyError:
        return  # no readable database: nothing runs on it
    if beat is not None and beat["state"] == "running":
        raise BackupError(
            f"the station is running (the worker beat {beat['age_seconds']:.0f} s ago, "
            f"fresh within {STALE_AFTER:.0f} s): stop it first, or pass --force"
        )


def _check_key(name: str, value: bytes) -> str:
    try:
        key = value.decode("ascii").strip()
    except UnicodeDecodeError:
        raise BackupError(f"the archive's key {name} is not text") from None
    if not MIN_SECRET_KEY_LENGTH <= len(key) <= MAX_KEY_LENGTH or not _KEY_FORMAT.fullmatch(key):
        raise BackupError(
            f"the archive's key {name} is not a key ({MIN_SECRET_KEY_LENGTH}-{MAX_KEY_LENGTH} "
            "printable characters, no spaces)"
        )
    return key


def _archive_keys(folder: Path) -> dict[str, str]:
    keys_dir = folder / KEYS_DIR
    present = {name for name in KEY_FILES if (keys_dir / name).is_file()}
    if not present:
        return {}
    if present != set(KEY_FILES):
        raise BackupError(f"the archive holds only some keys ({', '.join(sorted(present))})")
    return {name: _check_key(name, (keys_dir / name).read_bytes()) for name in KEY_FILES}


def _check_origin(
    settings: Settings,
    manifest: dict[str, Any],
    manifest_bytes: bytes,
    mac: str,
    trust: bool,
    keys: dict[str, str],
) -> None:
    own = station_id(settings.audit_ledger_key)
    # An archive of the first format names no station; its checkpoints are checked below.
    if not keys and manifest.get("station", own) != own:
        raise BackupError(
            "the archive was made by another station and holds no keys: its audit ledger "
            "could not be verified here; restore a backup made there with --include-keys, or "
            f"copy that station's keys into {settings.data_dir} first"
        )
    if not hmac.compare_digest(mac_of(backup_key(settings), manifest_bytes), mac) and not trust:
        raise BackupError(
            "the archive's MAC does not match this station's backup key: it was altered or made "
            f"by another station; copy that station's {BACKUP_KEY_FILE} into {settings.data_dir}, "
            "or pass --trust-archive if you know where it came from"
        )


def _check_manifest(engine: Engine, manifest: dict[str, Any]) -> dict[str, int]:
    backend = engine.dialect.name
    if manifest.get("backend") != backend:
        raise BackupError(
            f"the archive is a {manifest.get('backend')} backup; this station uses {backend}"
        )
    expected = {SQLITE_COPY: "sqlite", PG_DUMP: "postgresql"}
    if expected.get(str(manifest.get("database"))) != backend:
        raise BackupError("the manifest names no database copy of this backend")
    revision = manifest.get("revision")
    script = alembic_script.ScriptDirectory.from_config(alembic_config(engine))
    if not isinstance(revision, str) or revision not in {
        rev.revision for rev in script.walk_revisions()
    }:
        raise BackupError(
            f"the backup's schema revision {revision} is unknown to this release "
            f"({__version__}); it was made by a newer one: install that release, then restore"
        )
    counts = manifest.get("row_counts")
    if not isinstance(counts, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in counts.items()
    ):
        raise BackupError("the manifest's row counts are not a table of whole numbers")
    if not counts:
        raise BackupError("the manifest lists no tables")
    return dict(counts)


def _redacted(folder: Path, manifest: dict[str, Any]) -> dict[str, Any] | None:
    if manifest.get("includes_secrets", True) is True:
        if (folder / REDACTED_ROWS).exists():
            raise BackupError("the archive holds redacted rows but says it holds the secrets")
        return None
    try:
        redacted = json.loads((folder / REDACTED_ROWS).read_text())
    except (OSError, ValueError):
        raise BackupError(
            "the archive leaves the secrets out but has no readable rows for them"
        ) from None
    if not isinstance(redacted, dict) or not set(redacted) <= set(REDACTED_TABLES):
        raise BackupError("the archive's redacted rows name tables that hold no secrets")
    for table, body in redacted.items():
        columns, rows = body.get("columns"), body.get("rows")
        if not (isinstance(columns, list) and isinstance(rows, list)) or not all(
            isinstance(row, list) and len(row) == len(columns) for row in rows
        ):
            raise BackupError(f"the archive's redacted rows of {table} are malformed")
    return redacted


def _compare_counts(
    expected: dict[str, int], found: dict[str, int], redacted: dict[str, Any] | None, where: str
) -> None:
    wrong = []
    for table, count in sorted(expected.items()):
        have = found.get(table, 0)
        if redacted is not None and table in redacted:
            have += len(redacted[table]["rows"])
        if have != count:
            wrong.append(f"{table} {have} (manifest {count})")
    if wrong:
        raise BackupError(f"row counts of {where} differ from the manifest: {', '.join(wrong)}")


def _check_checkpoints(folder: Path, ledger_key: str, audit_rows: int) -> None:
    newest = last_checkpoint_in((folder / CHECKPOINT_FILE).read_text("utf-8", "replace"))
    if newest is None:
        return
    try:
        mark = AuditLedger(ledger_key).parse_checkpoint(newest)
    except ValueError:
        raise BackupError(
            "the archive's audit checkpoints were not signed with the ledger key the station "
            "would have: its ledger could not be verified"
        ) from None
    if mark.count > audit_rows:
        raise BackupError(
            f"the archive's newest checkpoint covers {mark.count} audit rows; it holds {audit_rows}"
        )


def _stage_sqlite(
    engine: Engine,
    folder: Path,
    expected: dict[str, int],
    manifest: dict[str, Any],
    redacted: dict[str, Any] | None,
    ledger_key: str,
) -> tuple[Path, list[Any]]:
    live = Path(str(engine.url.database))
    live.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=RESTORE_PREFIX, suffix=".sqlite3", dir=live.parent)
    os.close(fd)
    staged = Path(name)
    try:
        head = _check_sqlite_copy(engine, folder, staged, expected, manifest, redacted, ledger_key)
    except Exception:
        staged.unlink(missing_ok=True)
        raise
    return staged, head


def _check_sqlite_copy(
    engine: Engine,
    folder: Path,
    staged: Path,
    expected: dict[str, int],
    manifest: dict[str, Any],
    redacted: dict[str, Any] | None,
    ledger_key: str,
) -> list[Any]:
    live = Path(str(engine.url.database))
    shutil.copyfile(folder / SQLITE_COPY, staged)
    os.chmod(staged, 0o600)  # it holds password hashes: the station's account only
    try:
        check = sqlite3.connect(str(staged))
        try:
            result = check.execute("PRAGMA integrity_check").fetchall()
            revision = check.execute("SELECT version_num FROM alembic_version").fetchall()
        finally:
            check.close()
    except sqlite3.DatabaseError as ex:
        raise BackupError(f"the archive's database copy is not a sound SQLite file: {ex}") from ex
    if result != [("ok",)]:
        raise BackupError(f"the archive's database copy fails its integrity check: {result[0][0]}")
    if revision != [(manifest["revision"],)]:
        raise BackupError("the database copy's schema revision differs from the manifest's")
    plain = make_sqlite_engine(staged)
    try:
        with plain.begin() as conn:
            found = count_rows(conn, [t for t in expected if t in inspect(conn).get_table_names()])
            _compare_counts(expected, found, redacted, "the database copy")
            if redacted is not None:
                put_back_redacted(conn, redacted)
                own: dict[str, Any] = {}
                if live.is_file():
                    with engine.connect() as live_conn:
                        own = capture_own(live_conn)
                keep_own(conn, own)
            head = audit_head(conn)
            newest = last_checkpoint_in((folder / CHECKPOINT_FILE).read_text("utf-8", "replace"))
            verdict = AuditLedger(ledger_key).verify(conn, newest) if head[0] else None
        if verdict is not None and not verdict.ok:
            raise BackupError(
                f"the archive's audit ledger does not verify with the key the station would "
                f"have: {verdict.problem}"
            )
        with plain.connect() as conn:
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    except (SQLAlchemyError, ValueError) as ex:
        raise BackupError(f"the archive's database copy cannot be restored: {_line(ex)}") from ex
    finally:
        plain.dispose()
    return list(head)


def _stage_postgres(
    engine: Engine,
    folder: Path,
    expected: dict[str, int],
    manifest: dict[str, Any],
    redacted: dict[str, Any] | None,
) -> tuple[Path, list[Any]]:
    dump = folder / PG_DUMP
    check_listing(dump)
    script = folder / SCRIPT
    make_script(engine, dump, script)
    summary = summarise(script)
    if summary.revision != manifest["revision"]:
        raise BackupError("the database dump's schema revision differs from the manifest's")
    _compare_counts(expected, summary.row_counts, redacted, "the database dump")
    return script, list(summary.audit_head)


def _line(ex: BaseException) -> str:
    cause = getattr(ex, "orig", None) or ex
    lines = str(cause).strip().splitlines()
    return lines[0][:300] if lines else type(cause).__name__


def stage(
    settings: Settings, engine: Engine, archive: Path, folder: Path, trust_archive: bool
) -> Staged:
    """Unpack ``archive`` into ``folder`` and validate everything; raise BackupError if not."""
    manifest, manifest_bytes, mac = unpack(archive, folder)
    keys = _archive_keys(folder)
    _check_origin(settings, manifest, manifest_bytes, mac, trust_archive, keys)
    expected = _check_manifest(engine, manifest)
    redacted = _redacted(folder, manifest)
    if redacted is not None and keys:
        raise BackupError("the archive holds keys but leaves the secrets out")
    ledger_key = keys.get(LEDGER_KEY_FILE, settings.audit_ledger_key)
    _check_checkpoints(folder, ledger_key, expected.get("audit_logs", 0))
    if engine.dialect.name == "sqlite":
        database, head = _stage_sqlite(engine, folder, expected, manifest, redacted, ledger_key)
    else:
        database, head = _stage_postgres(engine, folder, expected, manifest, redacted)
    return Staged(folder, manifest, keys, redacted, head, database)


def _files(settings: Settings, staged: Staged, now: datetime) -> tuple[list[list[str]], list[str]]:
    """Stage the keys and checkpoint log to move in; return (moves, checkpoints set aside)."""
    folder = staged.folder
    moves: list[list[str]] = []
    for name, value in staged.keys.items():
        path = folder / KEYS_DIR / name
        path.write_text(value + "\n")
        os.chmod(path, 0o600)
        moves.append([f"{KEYS_DIR}/{name}", name])
    log_path = checkpoint_log_path(settings.data_dir)
    backed_up = (folder / CHECKPOINT_FILE).read_text(encoding="utf-8", errors="replace")
    kept = set(backed_up.splitlines())
    current = log_path.read_text(encoding="utf-8", errors="replace") if log_path.is_file() else ""
    after = [line for line in current.splitlines() if line.strip() and line not in kept]
    if after:
        aside = f"{CHECKPOINT_FILE}.after-backup-{now:%Y%m%dT%H%M%SZ}"
        (folder / aside).write_text("\n".join(after) + "\n", encoding="utf-8")
        moves.append([aside, aside])
    moves.append([CHECKPOINT_FILE, log_path.name])
    return moves, after


def _switch_sqlite(engine: Engine, staged: Staged) -> None:
    """Copy the staged file over the live one in one write transaction (SQLite backup API).

    The live file keeps its inode, so a process that still has it open sees the restored
    database, not a file that was renamed away; a kill before the copy commits leaves the old
    database whole.
    """
    live = Path(str(engine.url.database))
    engine.dispose()
    if not live.is_file():
        os.replace(staged.database, live)
        return
    try:
        source = sqlite3.connect(str(staged.database))
        target = sqlite3.connect(str(live), timeout=30)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
    except sqlite3.Error as ex:
        raise BackupError(f"the database could not be replaced (nothing changed): {ex}") from ex
    os.chmod(live, 0o600)  # it holds password hashes: the station's account only
    staged.database.unlink(missing_ok=True)


def _switch_postgres(engine: Engine, staged: Staged, fault: Fault) -> None:
    expected = {k: int(v) for k, v in staged.manifest["row_counts"].items()}
    engine.dispose()
    try:
        with engine.begin() as conn:
            own = capture_own(conn) if staged.redacted is not None else None
            replay(conn, staged.database)
            if staged.redacted is not None and own is not None:
                put_back_redacted(conn, staged.redacted)
                keep_own(conn, own)
            tables = [t for t in expected if t not in ACCOUNT_TABLES or staged.redacted is None]
            found = count_rows(conn, tables)
            _compare_counts({t: expected[t] for t in tables}, found, None, "the restored database")
            if list(audit_head(conn)) != staged.audit_head:
                raise BackupError("the restored audit ledger's head differs from the dump's")
            fault("replayed")
    except SQLAlchemyError as ex:
        raise BackupError(
            f"the database could not be replaced (nothing changed): {_line(ex)}"
        ) from ex
    finally:
        engine.dispose()


def _no_fault(step: str) -> None:
    return None


def restore_archive(
    settings: Settings,
    engine: Engine,
    archive: Path,
    *,
    now: datetime,
    force: bool = False,
    trust_archive: bool = False,
    fault: Fault = _no_fault,
) -> RestoreReport:
    """Restore ``archive`` (see the module docstring); raise BackupError, changing nothing."""
    refuse_while_running(engine, now, force)
    data_dir = settings.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=RESTORE_PREFIX, dir=data_dir))
    staged: Staged | None = None
    try:
        staged = stage(settings, engine, Path(archive), folder, trust_archive)
        moves, after = _files(settings, staged, now)
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        if staged is not None and staged.database.parent != folder:
            staged.database.unlink(missing_ok=True)
        raise
    fault("staged")
    sqlite = engine.dialect.name == "sqlite"
    plan = {
        "archive": str(archive),
        "staging": folder.name,
        "files": moves,
        "audit_head": staged.audit_head,
        "leftovers": [str(staged.database)] if sqlite else [],
    }
    write_plan(data_dir, plan)
    fault("planned")
    try:
        if sqlite:
            _switch_sqlite(engine, staged)
        else:
            _switch_postgres(engine, staged, fault)
    except Exception:
        drop_plan(data_dir, plan)
        raise
    fault("switched")
    move_staged_files(data_dir, plan)
    fault("moved")
    drop_plan(data_dir, plan)
    counts = {k: int(v) for k, v in staged.manifest["row_counts"].items()}
    aside = checkpoint_log_path(data_dir).with_name(moves[-2][1]) if after else None
    return RestoreReport(
        backend=engine.dialect.name,
        revision=staged.manifest.get("revision"),
        row_counts=counts,
        keys_restored=bool(staged.keys),
        secrets_restored=staged.redacted is None,
        after_backup=after,
        after_backup_file=aside,
    )
