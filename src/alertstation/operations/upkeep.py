"""Database upkeep and upgrade facts: optimize the database, describe versions and migrations.

:func:`optimize_database` runs ANALYZE and VACUUM (and REINDEX on SQLite) and reports the size
before and after. :func:`upgrade_info` gathers what ``/admin/operations/upgrade`` shows: the
running version, the schema revision against the newest shipped one, the migration history, the
operator release notes of this version (the guide ``release-notes``, not the developer
changelog) and the upgrade steps.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, text

from alertstation import lazy
from alertstation.db.migrate import alembic_config, current_revision
from alertstation.operations.public.guides import RELEASE_NOTES, guides_dir
from alertstation.version import __version__

# Alembic (about 11 MiB with Mako and Pygments) loads when an admin opens the migration list.
alembic_script = lazy.module("alembic.script")

UPGRADE_STEPS: Final[tuple[str, ...]] = (
    "Back the station up: alertstation backup --out /var/backups/alertstation.tar.gz",
    "Stop the station: systemctl stop alertstation-web alertstation-worker",
    "Install the new release: pip install --upgrade alertstation (in the station's venv)",
    "Migrate the database: alertstation migrate",
    "Start the station: systemctl start alertstation-web alertstation-worker",
)
_VERSION_HEADING = re.compile(r"^## (?P<name>\S+)")


@dataclass(frozen=True)
class OptimizeReport:
    """What an optimize run did."""

    backend: str
    steps: tuple[str, ...]
    size_before: int
    size_after: int

    def as_dict(self) -> dict[str, Any]:
        """Return JSON-ready data."""
        return {
            "backend": self.backend,
            "steps": list(self.steps),
            "size_before": self.size_before,
            "size_after": self.size_after,
            "saved": self.size_before - self.size_after,
        }


def _sqlite_path(engine: Engine) -> Path:
    return Path(str(engine.url.database))


def _sqlite_size(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return sum(p.stat().st_size for p in (path, wal) if p.exists())


def database_size(engine: Engine) -> int:
    """Return the database's size on disk in bytes (SQLite: the file and its WAL)."""
    if engine.dialect.name == "sqlite":
        return _sqlite_size(_sqlite_path(engine))
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())


def optimize_database(engine: Engine) -> OptimizeReport:
    """Run ANALYZE, VACUUM (and REINDEX on SQLite) outside any transaction; report sizes."""
    if engine.dialect.name == "sqlite":
        path = _sqlite_path(engine)
        steps = ("ANALYZE", "VACUUM", "REINDEX")
        connection = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        try:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            before = _sqlite_size(path)
            for step in steps:
                connection.execute(step)
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            after = _sqlite_size(path)
        finally:
            connection.close()
        return OptimizeReport("sqlite", steps, before, after)
    before = database_size(engine)
    steps = ("VACUUM (ANALYZE)",)
    with engine.connect() as conn:
        autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
        for step in steps:
            autocommit.execute(text(step))
    return OptimizeReport(engine.dialect.name, steps, before, database_size(engine))


@dataclass(frozen=True)
class Migration:
    """One shipped migration."""

    revision: str
    title: str
    applied: bool


def migration_history(engine: Engine) -> tuple[str | None, str, list[Migration]]:
    """Return (current revision, newest revision, every migration newest first)."""
    script = alembic_script.ScriptDirectory.from_config(alembic_config(engine))
    current = current_revision(engine)
    head = script.get_current_head() or ""
    revisions = list(script.walk_revisions())  # newest first
    applied: set[str] = set()
    if current is not None:
        applied = {rev.revision for rev in script.iterate_revisions(current, "base")}
    history = [
        Migration(
            rev.revision,
            (rev.doc or "").strip().splitlines()[0] if rev.doc else "",
            rev.revision in applied,
        )
        for rev in revisions
    ]
    return current, head, history


def release_notes_path() -> Path | None:
    """Return the operator release notes shipped with the guides; None without."""
    candidate = guides_dir() / f"{RELEASE_NOTES}.md"
    return candidate if candidate.is_file() else None


def changelog_since_previous(text_: str, version: str = __version__) -> str:
    """Return the section of ``version`` (with Unreleased above it, if any) of a changelog or
    of the release notes, whose versions are ``## `` headings.

    That is what changed since the previous version. Empty when ``version`` has no section.
    """
    lines = text_.splitlines()
    start = end = None
    for index, line in enumerate(lines):
        match = _VERSION_HEADING.match(line)
        if not match:
            continue
        if start is None and match["name"] in ("Unreleased", version):
            start = index
        elif start is not None and match["name"] not in ("Unreleased", version):
            end = index
            break
    if start is None:
        return ""
    return "\n".join(lines[start:end]).strip()


def upgrade_info(engine: Engine) -> dict[str, Any]:
    """Return what the upgrade page shows."""
    current, head, history = migration_history(engine)
    path = release_notes_path()
    notes = changelog_since_previous(path.read_text(encoding="utf-8")) if path else ""
    return {
        "version": __version__,
        "revision": current,
        "head": head,
        "up_to_date": current == head,
        "migrations": [
            {"revision": m.revision, "title": m.title, "applied": m.applied} for m in history
        ],
        "release_notes": notes,
        "release_notes_found": path is not None,
        "steps": list(UPGRADE_STEPS),
    }
