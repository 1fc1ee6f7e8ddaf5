"""Station health: database reachability and schema state."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from alertstation.db.migrate import current_revision

log = logging.getLogger("alertstation.system")


@dataclass(frozen=True)
class Health:
    """What /healthz reports."""

    database_ok: bool
    schema_revision: str | None
    schema_current: bool

    @property
    def ok(self) -> bool:
        """Tell whether the station can serve requests."""
        return self.database_ok and self.schema_current


def check_health(engine: Engine, head_revision: str) -> Health:
    """Probe the database with a read-only query; never writes."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        revision = current_revision(engine)
    except SQLAlchemyError as ex:
        log.error("health check: database unreachable: %s", ex.__class__.__name__)
        return Health(database_ok=False, schema_revision=None, schema_current=False)
    return Health(
        database_ok=True, schema_revision=revision, schema_current=revision == head_revision
    )
