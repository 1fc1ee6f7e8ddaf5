"""The dependencies a running station hands to its resources and jobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import Engine

from alertstation.audit.ledger import AuditLedger
from alertstation.db.types import utcnow
from alertstation.eas.airing import AiringState
from alertstation.http.templates import Templates
from alertstation.security.autoban_settings import AutobanSettingsCache
from alertstation.security.gate import BanCache
from alertstation.settings import Settings
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
    clock: Callable[[], datetime] = field(default=utcnow)
    airing: AiringState = field(init=False)  # the airing queue's active flag, from the engine
    autoban_settings: AutobanSettingsCache = field(init=False)  # automatic-ban thresholds

    def __post_init__(self) -> None:
        object.__setattr__(self, "airing", AiringState(self.engine))
        object.__setattr__(self, "autoban_settings", AutobanSettingsCache(self.engine))

    @property
    def session_lifetime(self) -> timedelta:
        """Return how long a session may live and idle."""
        return timedelta(hours=self.settings.session_lifetime_hours)
