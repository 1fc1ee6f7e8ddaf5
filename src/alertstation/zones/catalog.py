"""Look zones up from an in-memory copy of the catalog that follows the ``zones`` generation.

Every sync bumps the ``zones`` generation in its own transaction; a :class:`ZoneCatalog` re-reads
the generation at most once per ``check_interval`` (one second) and rebuilds its copy when it
moved. A sync made by any process is therefore seen by every process within about a second, and
a sync that rolled back is never seen at all. ``clear()`` drops the copy at once, for the process
that just synced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, select

from alertstation.db.generations import GenerationCache
from alertstation.zones.fips import CountyIndex, load_county_index
from alertstation.zones.loader import ZoneRecord
from alertstation.zones.tables import wx_zones

ZONES_GENERATION = "zones"
# Which zone a bare code means when several families share it.
TYPE_PREFERENCE = ("public", "marine", "fire")


@dataclass(frozen=True)
class CatalogIndex:
    """The catalog as held in memory: zones by (code, type), the preferred zone per code."""

    zones: dict[tuple[str, str], ZoneRecord]
    preferred: dict[str, ZoneRecord]
    counties: CountyIndex


def build_index(conn: Connection) -> CatalogIndex:
    """Read every zone, county and subdivision into a CatalogIndex."""
    zones: dict[tuple[str, str], ZoneRecord] = {}
    fields = [wx_zones.c[name] for name in ZoneRecord.__dataclass_fields__]
    for row in conn.execute(select(*fields)):
        record = ZoneRecord(*row)
        zones[(record.zone_code, record.zone_type)] = record
    return CatalogIndex(zones, prefer(zones.values()), load_county_index(conn))


def prefer(records: Iterable[ZoneRecord]) -> dict[str, ZoneRecord]:
    """Map each code to its preferred record: public before marine before fire-weather."""
    rank = {zone_type: position for position, zone_type in enumerate(TYPE_PREFERENCE)}
    preferred: dict[str, ZoneRecord] = {}
    for record in records:
        current = preferred.get(record.zone_code)
        if current is None or rank.get(record.zone_type, 99) < rank.get(current.zone_type, 99):
            preferred[record.zone_code] = record
    return preferred


class ZoneCatalog:
    """Answer zone lookups from memory; rebuilt when another process syncs the catalog."""

    def __init__(
        self,
        engine: Engine,
        *,
        check_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._held: CatalogIndex | None = None
        self._cache: GenerationCache[CatalogIndex] = GenerationCache(
            engine, ZONES_GENERATION, self._build, check_interval=check_interval, clock=clock
        )

    def _build(self, conn: Connection) -> CatalogIndex:
        self._held = build_index(conn)
        return self._held

    def index(self) -> CatalogIndex:
        """Return the current in-memory catalog, rebuilding it when the generation moved."""
        return self._cache.get()

    def county_index(self) -> CountyIndex:
        """Return the county FIPS table and subdivision index held with the catalog."""
        return self.index().counties

    def lookup(self, code: str, zone_type: str | None = None) -> ZoneRecord | None:
        """Return the zone with this code (of ``zone_type`` if given; public preferred)."""
        code = code.strip().upper()
        index = self._cache.get()
        if zone_type is None:
            return index.preferred.get(code)
        return index.zones.get((code, zone_type))

    def name_for(self, code: str) -> str | None:
        """Return the name of the zone with this code, None when the catalog lacks it."""
        record = self._cache.get().preferred.get(code.strip().upper())
        return record.name if record is not None else None

    def contains(self, code: str) -> bool:
        """Tell whether any family of the catalog holds this code."""
        return self.lookup(code) is not None

    @property
    def size(self) -> int:
        """Return how many zones the in-memory copy holds (0 before the first lookup)."""
        held = self._held
        return len(held.zones) if held is not None else 0

    @property
    def generation(self) -> int | None:
        """Return the generation the in-memory copy was built from, None before the first."""
        return self._cache.generation

    def clear(self) -> None:
        """Drop the in-memory copy; the next lookup reads the catalog again."""
        self._cache.clear()
        self._held = None
