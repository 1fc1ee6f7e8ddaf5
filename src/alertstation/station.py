"""Build the shared dependencies of one process (a :class:`Station`) without the web app.

The worker and the commands need a Station but not the routes, resources and pages: building
it here keeps those out of their processes. ``alertstation.app`` re-exports it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

import alertstation.schema  # noqa: F401  (the whole schema on the shared metadata)
from alertstation.alerts.broadcast import BroadcastState
from alertstation.audit.ledger import AuditLedger
from alertstation.context import Station
from alertstation.db.engine import make_engine
from alertstation.db.types import utcnow
from alertstation.eas.airing.queue import AiringState
from alertstation.eas.plain import PlainLanguage
from alertstation.http.templates import Templates
from alertstation.security.autoban.settings import AutobanSettingsCache
from alertstation.security.bans.gate import BanCache
from alertstation.security.hostban import service as hostban_service
from alertstation.settings import Settings
from alertstation.settings_admin.sections import station_time_zone
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.places import PlaceNames

log = logging.getLogger("alertstation.app")


def build_station(
    settings: Settings,
    engine: Engine | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> Station:
    """Create the shared dependencies of one process."""
    engine = engine if engine is not None else make_engine(settings.database_url)
    airing = AiringState(engine)
    station = Station(
        settings=settings,
        engine=engine,
        templates=Templates(),
        ledger=AuditLedger(settings.audit_ledger_key),
        zones=ZoneCatalog(engine),
        bans=BanCache(engine, clock=clock),
        airing=airing,
        autoban_settings=AutobanSettingsCache(engine),
        broadcast=BroadcastState(engine, clock=clock, airing=airing),
        clock=clock,
    )
    station.bans.add_change_listener(lambda: hostban_service.mirror_change(station))
    station.templates.time_zone_source = lambda: _station_time_zone(engine)
    station.templates.plain_text_source = lambda header, near, zone: PlainLanguage(
        PlaceNames(station.zones), zone
    ).text_or_none(header, near=near)
    return station


def _station_time_zone(engine: Engine) -> tzinfo:
    """Read the station's time zone for one page (UTC when the database cannot say)."""
    try:
        with engine.connect() as conn:
            return station_time_zone(conn)
    except SQLAlchemyError:
        log.warning("station time zone unreadable; the page shows UTC", exc_info=True)
        return UTC
