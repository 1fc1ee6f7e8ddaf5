"""Run the Alembic migrations that ship inside the package."""

from __future__ import annotations

import ast
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from alertstation import lazy

if TYPE_CHECKING:
    from alembic.config import Config

alembic_command = lazy.module("alembic.command")
alembic_config_module = lazy.module("alembic.config")
alembic_script = lazy.module("alembic.script")

VERSION_TABLE = "alembic_version"


def alembic_config(engine: Engine) -> Config:
    """Build an Alembic configuration bound to ``engine``; no alembic.ini is needed."""
    config = alembic_config_module.Config()
    config.set_main_option("script_location", str(Path(str(files("alertstation.migrations")))))
    config.attributes["engine"] = engine
    return config


def current_revision(engine: Engine) -> str | None:
    """Return the revision the database is at, None for an empty database.

    Read from Alembic's version table without loading Alembic (the web server's health check
    asks this on every call). Two rows (a branched history) raise as Alembic does.
    """
    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        rows = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(rows) > 1:
        raise RuntimeError(f"the database is at more than one revision: {', '.join(rows)}")
    return rows[0] if rows else None


def head_revision(engine: Engine) -> str:
    """Return the newest revision that ships with this version."""
    head = alembic_script.ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    if head is None:
        raise RuntimeError("no migrations found in alertstation.migrations")
    return head


def shipped_head() -> str:
    """Return the newest revision that ships with this version, read from the migration files
    (as :func:`head_revision` says, without loading Alembic)."""
    heads = shipped_heads()
    if len(heads) != 1:
        raise RuntimeError(f"the shipped migrations have {len(heads)} heads, not one")
    return next(iter(heads))


def pending_revisions(engine: Engine) -> list[str]:
    """List the revisions an upgrade to head would apply, oldest first."""
    script = alembic_script.ScriptDirectory.from_config(alembic_config(engine))
    current = current_revision(engine)
    pending = [rev.revision for rev in script.iterate_revisions("heads", current)]
    return list(reversed(pending))


def _revisions_of(source: str) -> tuple[str | None, tuple[str, ...]]:
    """Return a migration file's ``revision`` and its ``down_revision`` ids, read with ast."""
    found: dict[str, object] = {}
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id in ("revision", "down_revision") and value:
            found[target.id] = ast.literal_eval(value)
    down = found.get("down_revision")
    downs = tuple(down) if isinstance(down, tuple | list) else (down,) if down else ()
    revision = found.get("revision")
    return (revision if isinstance(revision, str) else None), tuple(str(d) for d in downs)


def shipped_heads() -> frozenset[str]:
    """Return the head revisions of the shipped migrations, read from their files (no import)."""
    folder = Path(str(files("alertstation.migrations"))) / "versions"
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in folder.glob("*.py"):
        revision, downs = _revisions_of(path.read_text())
        if revision:
            revisions.add(revision)
            parents.update(downs)
    return frozenset(revisions - parents)


def is_at_head(engine: Engine) -> bool:
    """Tell quickly whether the database is at the shipped head, without loading Alembic.

    False also when it cannot tell (no version table yet): the caller then asks Alembic
    (:func:`pending_revisions`), which says what is pending.
    """
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    except SQLAlchemyError:
        return False
    heads = shipped_heads()
    return bool(heads) and set(rows) == heads


def upgrade_to_head(engine: Engine) -> list[str]:
    """Apply every pending migration and return the revisions applied (empty when up to date)."""
    pending = pending_revisions(engine)
    if pending:
        alembic_command.upgrade(alembic_config(engine), "head")
    return pending
