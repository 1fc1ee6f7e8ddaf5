"""The GeoIP database paths of the traffic settings, handed down to the GeoIP lookups.

``geoip_database_path`` and ``geoip_asn_database_path`` live in the traffic settings; the lookups
(``alertstation.security.geoip.lookup``, a lower layer) read them through the ``SettingsPaths``
keeper that ``attach`` registers for a station's data directory, and a GeoIP upload points them
at the file it installed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, Engine

from alertstation.security.geoip.lookup import ASN, LOCATION, keep_paths
from alertstation.traffic.settings import save_settings, settings_cache_for

#: The setting of each GeoIP slot.
SETTINGS = {LOCATION: "geoip_database_path", ASN: "geoip_asn_database_path"}


class SettingsPaths:
    """The GeoIP paths of one database's traffic settings (read through the settings cache)."""

    def __init__(self, engine: Engine, clock: Callable[[], datetime]) -> None:
        self._engine = engine
        self._clock = clock

    def configured(self) -> dict[str, str | None]:
        """Return each slot's configured path, None where none is set."""
        current = settings_cache_for(self._engine).get()
        return {slot: getattr(current, name) for slot, name in SETTINGS.items()}

    def point(self, conn: Connection, slot: str, path: Path) -> list[str]:
        """Set ``slot``'s path setting to ``path``; return the changed setting names."""
        _, changed = save_settings(conn, {SETTINGS[slot]: str(path)}, self._clock())
        return changed

    def refresh(self) -> None:
        """Drop the cached settings, so the next lookup reads the committed paths."""
        settings_cache_for(self._engine).clear()


def attach(engine: Engine, data_dir: Path, clock: Callable[[], datetime]) -> None:
    """Make the traffic settings of ``engine`` say where the databases of ``data_dir`` are
    (``clock`` stamps a change an upload makes)."""
    keep_paths(data_dir, SettingsPaths(engine, clock))
