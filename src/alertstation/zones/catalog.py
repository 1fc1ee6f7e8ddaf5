"""Look zones up from an in-memory copy of the catalog that follows the ``zones`` generation.

Every sync bumps the ``zones`` generation in its own transaction; a :class:`ZoneCatalog` re-reads
the generation at most once per ``check_interval`` (one second) and rebuilds its copy when it
moved. A sync made by any process is therefore seen by every process within about a second, and
a sync that rolled back is never seen at all. ``clear()`` drops the copy at once, for the process
that just synced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

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
    #: Name of the preferred zone per code (what ``name_for`` answers), built with the index.
    names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ZoneView:
    """One generation-checked copy of the catalog for many lookups (a request, a batch).

    Taken with ``ZoneCatalog.view()``: the generation is checked once, then every lookup is a
    plain dict lookup. Codes must already be normalised (upper case, no surrounding space), as
    codes from settings, alerts and validated input are; ``ZoneCatalog.name_for`` and
    ``lookup`` normalise for one-off callers. Hold a view for one request or batch only, so
    a sync elsewhere is still seen within about a second.
    """

    index: CatalogIndex
    generation: int
    #: ``name_for(code)``: the preferred zone's name, None when the catalog lacks the code.
    name_for: Callable[[str], str | None]
    #: ``record_for(code)``: the preferred zone's record, None when the catalog lacks it.
    record_for: Callable[[str], ZoneRecord | None]

    def lookup(self, code: str, zone_type: str | None = None) -> ZoneRecord | None:
        """Return the zone with this normalised code (of ``zone_type`` if given)."""
        if zone_type is None:
            return self.index.preferred.get(code)
        return self.index.zones.get((code, zone_type))

    def contains(self, code: str) -> bool:
        """Tell whether any family of the catalog holds this normalised code."""
        return code in self.index.preferred


def build_index(conn: Connection) -> CatalogIndex:
    """Read every zone, county and subdivision into a CatalogIndex."""
    zones: dict[tuple[str, str], ZoneRecord] = {}
    fields = [wx_zones.c[name] for name in ZoneRecord.__dataclass_fields__]
    for row in conn.execute(select(*fields)):
        record = ZoneRecord(*row)
        zones[(record.zone_code, record.zone_type)] = record
    preferred = prefer(zones.values())
    names = {code: record.name for code, record in preferred.items()}
    return CatalogIndex(zones, preferred, load_county_index(conn), names)


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
        self._view: ZoneView | None = None
        self._cache: GenerationCache[CatalogIndex] = GenerationCache(
            engine, ZONES_GENERATION, self._build, check_interval=check_interval, clock=clock
        )

    def _build(self, conn: Connection) -> CatalogIndex:
        self._held = build_index(conn)
        return self._held

    def index(self) -> CatalogIndex:
        """Return the current in-memory catalog, rebuilding it when the generation moved."""
        return self._cache.get()

    def view(self) -> ZoneView:
        """Return the current catalog for many lookups, after one generation check."""
        index, generation = self._cache.snapshot()
        view = self._view
        if view is None or view.index is not index:
            view = ZoneView(index, generation, index.names.get, index.preferred.get)
            self._view = view
        return view

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
        return self._cache.get().names.get(code.strip().upper())

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
        self._view = None
