"""Plumbing every command shares: one-line errors, the parser, settings and the database.

Each domain's ``cli.py`` imports from here (never from the top-level ``alertstation.cli``, which
assembles them), so a domain's commands sit below the command that lists them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

from alertstation.db.engine import make_engine
from alertstation.db.migrate import is_at_head, pending_revisions
from alertstation.db.restore_plan import RESOLVED, finish_pending_restore
from alertstation.db.types import utcnow
from alertstation.errors import AppError
from alertstation.logs import configure_logging
from alertstation.settings import Settings, SettingsError, warn_skipped_variables

if TYPE_CHECKING:
    from sqlalchemy import Engine

EXIT_FAILURE = 1
EXIT_USAGE = 2


class CommandError(Exception):
    """A command could not do its job; the message is shown as one line."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are a single line."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def load_settings(*, create: bool = False) -> Settings:
    """Read the settings from the environment and configure logging for a command.

    A data directory that does not exist is refused, naming it, unless ``create`` (``migrate``,
    ``run`` and ``user ensure-admin`` make a new station). A restore that was killed while it
    switched over is finished (or dropped) first, and the settings read again, so no command
    sees half a station.
    """
    settings = Settings.from_env(create_data_dir=create)
    configure_logging(settings.log_level, "text" if sys.stderr.isatty() else settings.log_format)
    if finish_pending_restore(settings.data_dir, settings.database_url) in RESOLVED:
        settings = Settings.from_env()
    warn_skipped_variables(settings)
    return settings


def open_engine(settings: Settings) -> Engine:
    """Return an engine on the configured database."""
    return make_engine(settings.database_url)


def check_schema(engine: Engine) -> None:
    """Raise CommandError while migrations are pending (Alembic is loaded only then)."""
    if is_at_head(engine):
        return
    pending = pending_revisions(engine)
    if pending:
        raise CommandError(
            f"the database schema is {len(pending)} migration(s) behind; "
            "run `alertstation migrate` first"
        )


def require_current_schema(settings: Settings) -> None:
    """Raise CommandError unless the configured database is at the newest revision."""
    engine = open_engine(settings)
    try:
        check_schema(engine)
    finally:
        engine.dispose()


def open_database(*, create: bool = False) -> tuple[Settings, Engine]:
    """Return the settings and an engine, refusing a database that still needs migrating.

    Sub-commands that work on the database start here; they dispose of the engine when done.
    A data directory that does not exist is refused unless ``create``.
    """
    settings = load_settings(create=create)
    engine = open_engine(settings)
    try:
        check_schema(engine)
    except CommandError:
        engine.dispose()
        raise
    return settings, engine


@dataclass(frozen=True)
class OpenedDatabase:
    """What a command that only works on tables needs: the settings, an engine and a clock.

    A :class:`~alertstation.context.Station` has the same three; opening only these keeps the
    Station's caches and the modules they import (the alert matcher and numpy, the zone
    catalog, the templates) out of such a command's start-up.
    """

    settings: Settings
    engine: Engine
    clock: Callable[[], datetime] = utcnow


def open_tables() -> OpenedDatabase:
    """Return :func:`open_database`'s settings and engine, with the real clock."""
    settings, engine = open_database()
    return OpenedDatabase(settings, engine)


def failure_status(ex: CommandError | SettingsError | AppError | ValueError) -> int:
    """Print why a command was refused (``alertstation: error: ...``); return its exit status:
    2 for bad settings or input, 1 for a command that could not do its work."""
    message = getattr(ex, "message", None) or str(ex)
    print(f"alertstation: error: {message}", file=sys.stderr)
    return EXIT_USAGE if isinstance(ex, SettingsError | AppError | ValueError) else EXIT_FAILURE


#: What :func:`failure_status` reports; anything else is a crash with its traceback.
REFUSALS = (CommandError, SettingsError, AppError, ValueError)
