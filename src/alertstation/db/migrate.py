"""Run the Alembic migrations that ship inside the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine


def alembic_config(engine: Engine) -> Config:
    """Build an Alembic configuration bound to ``engine``; no alembic.ini is needed."""
    config = Config()
    config.set_main_option("script_location", str(Path(str(files("alertstation.migrations")))))
    config.attributes["engine"] = engine
    return config


def current_revision(engine: Engine) -> str | None:
    """Return the revision the database is at, None for an empty database."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision(engine: Engine) -> str:
    """Return the newest revision that ships with this version."""
    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    if head is None:
        raise RuntimeError("no migrations found in alertstation.migrations")
    return head


def pending_revisions(engine: Engine) -> list[str]:
    """List the revisions an upgrade to head would apply, oldest first."""
    script = ScriptDirectory.from_config(alembic_config(engine))
    current = current_revision(engine)
    pending = [rev.revision for rev in script.iterate_revisions("heads", current)]
    return list(reversed(pending))


def upgrade_to_head(engine: Engine) -> list[str]:
    """Apply every pending migration and return the revisions applied (empty when up to date)."""
    pending = pending_revisions(engine)
    if pending:
        command.upgrade(alembic_config(engine), "head")
    return pending
