"""The dependencies a running station hands to its resources and jobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from alertstation.db.types import utcnow
from alertstation.http.templates import Templates
from alertstation.settings import Settings

if TYPE_CHECKING:
    # The caches a Station holds belong to the domains above this layer; they are built by
    # ``alertstation.app.build_station`` and named here for type checkers only.
    from alertstation.alerts.broadcast import BroadcastState
    from alertstation.audit.ledger import AuditLedger
    from alertstation.eas.airing.queue import AiringState
    from alertstation.security.autoban.settings import AutobanSettingsCache
    from alertstation.security.bans.gate import BanCache
    from alertstation.zones.catalog import ZoneCatalog


@dataclass(frozen=True)
class Station:
    """What one process shares: settings, engine, pages, audit ledger, zone catalog, clock."""

    settings: Settings
    engine: Engine
    templates: Templates
    ledger: AuditLedger
    zones: ZoneCatalog
    bans: BanCache
    airing: AiringState  # the airing queue's active flag, from the engine
    autoban_settings: AutobanSettingsCache  # automatic-ban thresholds
    broadcast: BroadcastState  # the active-alerts snapshot: is the station broadcasting?
    clock: Callable[[], datetime] = field(default=utcnow)

    @property
    def session_lifetime(self) -> timedelta:
        """Return how long a session may live and idle."""
        return timedelta(hours=self.settings.session_lifetime_hours)
