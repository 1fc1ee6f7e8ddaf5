"""The dependencies a running station hands to its resources and jobs."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from alertstation.audit.ledger import AuditLedger
from alertstation.http.templates import Templates
from alertstation.settings import Settings


@dataclass(frozen=True)
class Station:
    """Settings, database engine, page renderer and audit ledger shared by one process."""

    settings: Settings
    engine: Engine
    templates: Templates
    ledger: AuditLedger
