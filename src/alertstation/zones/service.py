"""Sync the zone catalog from DBF files: all-or-nothing, family by family, cache-safe.

A sync replaces the rows of each family it is given (public, marine, fire, partial) and leaves
the other families alone. It runs in the caller's transaction (``begin_write``) and bumps the
``zones`` generation in that transaction, so every process's :class:`ZoneCatalog` sees the new
catalog within about a second and a failed sync leaves the previous catalog, and the caches,
exactly as they were. Files are read and checked before the transaction opens.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Table, delete, func, insert, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import AuditLedger
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.db.types import utcnow
from alertstation.settings import Settings
from alertstation.zones.catalog import ZONES_GENERATION
from alertstation.zones.loader import (
    FAMILIES,
    ZONE_TYPES,
    CountySubdivision,
    ZoneRecord,
    load_dbf,
    load_partial_counties,
)
from alertstation.zones.resolver import resolve_dbf_paths
from alertstation.zones.tables import county_fips, county_subdivisions, wx_zones, zone_sources

log = logging.getLogger("alertstation.zones")

AUDIT_SECTION = "zone_catalog"
INSERT_BATCH = 1000

FamilyProgress = Callable[[str, int, int], None]
Records = Sequence[ZoneRecord] | Sequence[CountySubdivision]


@dataclass(frozen=True)
class SyncReport:
    """What a sync applied: rows inserted and records read per family, and the files used."""

    counts: dict[str, int]
    records: dict[str, int]
    paths: dict[str, Path] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    generation: int = 0

    def lines(self) -> list[str]:
        """Return one human-readable line per family, in family order."""
        out = []
        for family in FAMILIES:
            if family in self.counts:
                source = f" from {self.paths[family].name}" if family in self.paths else ""
                out.append(f"{family}: {self.details.get(family, self.counts[family])}{source}")
        return out


@dataclass(frozen=True)
class SourceInfo:
    """The file a family was last synced from, as kept in ``zone_sources``."""

    family: str
    file_name: str
    file_size: int
    sha256: str
    record_count: int
    row_count: int
    applied_at: datetime


def sync_catalog(
    conn: Connection,
    records_by_family: Mapping[str, Records],
    *,
    sources: Mapping[str, Path] | None = None,
) -> SyncReport:
    """Replace the given families' rows in the caller's transaction and bump ``zones``.

    ``records_by_family`` maps ``public``, ``marine`` and ``fire`` to ZoneRecords and ``partial``
    to CountySubdivisions. ``sources`` names the file of each family; those are remembered in
    ``zone_sources`` so a later :func:`ensure_catalog` can tell whether a file changed. Nothing is
    written when the input is inconsistent; a failure part-way is undone by the caller's rollback.
    """
    _check_input(records_by_family)
    counts: dict[str, int] = {}
    details: dict[str, str] = {}
    for family, records in records_by_family.items():
        if family == "partial":
            counties, parts = _replace_counties(conn, records)  # type: ignore[arg-type]
            counts[family] = counties + parts
            details[family] = f"{counties} counties, {parts} subdivisions"
        else:
            counts[family] = _replace_zones(conn, family, records)  # type: ignore[arg-type]
            merged = len(records) - counts[family]
            details[family] = f"{counts[family]} zones" + (
                f" ({merged} extra part(s) of multi-part zones merged)" if merged else ""
            )
    paths = {family: Path(path) for family, path in (sources or {}).items()}
    now = utcnow()
    for family, path in paths.items():
        if family in counts:
            _remember_source(conn, family, path, len(records_by_family[family]), counts, now)
    generation = bump_generation(conn, ZONES_GENERATION)
    records = {family: len(items) for family, items in records_by_family.items()}
    return SyncReport(counts, records, paths, details, generation)


def load_files(
    paths: Mapping[str, Path], *, progress: FamilyProgress | None = None
) -> dict[str, Records]:
    """Read every family's file, checking each holds the family it was named for."""
    loaded: dict[str, Records] = {}
    for family, path in paths.items():
        report = _labelled(progress, Path(path).name)
        if family == "partial":
            loaded[family] = load_partial_counties(path, progress=report)
            continue
        if family not in ZONE_TYPES:
            raise ValueError(f"unknown zone family {family!r}; expected one of {FAMILIES}")
        records = load_dbf(path, progress=report)
        kinds = {record.zone_type for record in records}
        if kinds - {family}:
            raise ValueError(
                f"{Path(path).name} holds {', '.join(sorted(kinds))} zones, not {family} zones"
            )
        loaded[family] = records
    return loaded


def apply_files(
    engine: Engine,
    paths: Mapping[str, Path],
    *,
    settings: Settings | None = None,
    actor: Any = None,
    progress: FamilyProgress | None = None,
) -> SyncReport:
    """Load the given files, then sync them in one write transaction.

    With ``settings`` the sync is recorded in the audit ledger as ``config.updated`` of section
    ``zone_catalog`` (field names: the families), by ``actor`` or the system actor.
    """
    loaded = load_files(paths, progress=progress)
    with begin_write(engine) as conn:
        report = sync_catalog(conn, loaded, sources=paths)
        _audit(conn, settings, actor, report)
    return report


def ensure_catalog(
    engine: Engine, settings: Settings, *, progress: FamilyProgress | None = None
) -> SyncReport | None:
    """Seed or refresh the catalog at start-up; return None when nothing needed doing.

    On an empty catalog every resolved family is synced. Later, a family is synced again only
    when its resolved file differs (name or SHA-256) from the one recorded in ``zone_sources``.
    """
    paths = resolve_dbf_paths(settings.assets_dir, env_path=settings.wx_zone_dbf_path)
    if not paths:
        log.warning("no zone DBF files found in %s; zone catalog unchanged", settings.assets_dir)
        return None
    missing = [str(path) for path in paths.values() if not path.is_file()]
    if missing:
        raise ValueError(f"zone DBF file not found: {', '.join(missing)}")
    digests = {family: file_sha256(path) for family, path in paths.items()}
    with engine.connect() as conn:
        due = _due_families(conn, paths, digests)
    if not due:
        return None
    loaded = load_files({f: p for f, p in paths.items() if f in due}, progress=progress)
    with begin_write(engine) as conn:
        bump_generation(conn, ZONES_GENERATION)  # first: serialises hosts starting together
        # Another process may have applied the same files while these were being read.
        due = _due_families(conn, paths, digests) & due
        if not due:
            return None
        chosen = {family: paths[family] for family in FAMILIES if family in due}
        report = sync_catalog(conn, {f: loaded[f] for f in chosen}, sources=chosen)
        _audit(conn, settings, None, report)
    log.info("zone catalog synced: %s", "; ".join(report.lines()))
    return report


def read_sources(conn: Connection) -> dict[str, SourceInfo]:
    """Return the file each family was last synced from."""
    rows = conn.execute(select(zone_sources)).mappings()
    return {row["family"]: SourceInfo(**row) for row in rows}


def count_zones(conn: Connection, zone_type: str | None = None) -> int:
    """Count catalog rows, optionally of one zone type."""
    query = select(func.count()).select_from(wx_zones)
    if zone_type is not None:
        query = query.where(wx_zones.c.zone_type == zone_type)
    return int(conn.execute(query).scalar_one())


def file_sha256(path: Path) -> str:
    """Return the SHA-256 of a file's content as hex."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _labelled(progress: FamilyProgress | None, label: str) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    return lambda done, total: progress(label, done, total)


def _check_input(records_by_family: Mapping[str, Records]) -> None:
    if not records_by_family:
        raise ValueError("no zone families to sync")
    for family, records in records_by_family.items():
        if family not in FAMILIES:
            raise ValueError(f"unknown zone family {family!r}; expected one of {FAMILIES}")
        if not records:
            raise ValueError(f"the {family} file holds no records; refusing to empty the family")
        expected = CountySubdivision if family == "partial" else ZoneRecord
        for record in records:
            if not isinstance(record, expected):
                raise ValueError(f"{family} records must be {expected.__name__} objects")
            if family != "partial" and record.zone_type != family:  # type: ignore[union-attr]
                raise ValueError(
                    f"a {record.zone_type} zone was given as part of the {family} family"  # type: ignore[union-attr]
                )


def _replace_zones(conn: Connection, zone_type: str, records: Sequence[ZoneRecord]) -> int:
    conn.execute(delete(wx_zones).where(wx_zones.c.zone_type == zone_type))
    rows: dict[str, dict[str, Any]] = {}
    for record in records:
        # A zone drawn in several parts has one record per part; the first one is kept.
        if record.zone_code not in rows:
            rows[record.zone_code] = _zone_row(record)
    _insert_rows(conn, wx_zones, list(rows.values()))
    return len(rows)


def _replace_counties(conn: Connection, records: Sequence[CountySubdivision]) -> tuple[int, int]:
    counties: dict[str, dict[str, Any]] = {}
    parts: dict[str, dict[str, Any]] = {}
    # The whole-county row (P = 0) describes the county best; any row will do when there is none.
    for record in sorted(records, key=lambda r: r.part != 0):
        counties.setdefault(record.county_fips, _county_row(record))
        if record.part != 0:
            parts.setdefault(record.same_code, _subdivision_row(record))
    conn.execute(delete(county_subdivisions))
    conn.execute(delete(county_fips))
    _insert_rows(conn, county_fips, list(counties.values()))
    _insert_rows(conn, county_subdivisions, list(parts.values()))
    return len(counties), len(parts)


def _insert_rows(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), INSERT_BATCH):
        _insert_batch(conn, table, rows[start : start + INSERT_BATCH])


def _insert_batch(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(table), rows)


def _zone_row(record: ZoneRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in wx_zones.columns.keys()}


def _county_row(record: CountySubdivision) -> dict[str, Any]:
    return {
        "fips": record.county_fips,
        "state_code": record.state_code,
        "county_name": record.county_name or record.area_name,
        "cwa": record.cwa,
        "time_zone": record.time_zone,
        "fe_area": record.fe_area,
        "longitude": record.longitude,
        "latitude": record.latitude,
    }


def _subdivision_row(record: CountySubdivision) -> dict[str, Any]:
    return {
        "same_code": record.same_code,
        "county_fips": record.county_fips,
        "part": record.part,
        "name": record.area_name or record.county_name,
        "longitude": record.longitude,
        "latitude": record.latitude,
    }


def _remember_source(
    conn: Connection,
    family: str,
    path: Path,
    record_count: int,
    counts: Mapping[str, int],
    now: datetime,
) -> None:
    conn.execute(delete(zone_sources).where(zone_sources.c.family == family))
    conn.execute(
        insert(zone_sources).values(
            family=family,
            file_name=path.name[:255],
            file_size=path.stat().st_size,
            sha256=file_sha256(path),
            record_count=record_count,
            row_count=counts[family],
            applied_at=now,
        )
    )


def _due_families(
    conn: Connection, paths: Mapping[str, Path], digests: Mapping[str, str]
) -> set[str]:
    if count_zones(conn) == 0:
        return set(paths)
    applied = read_sources(conn)
    due = set()
    for family, path in paths.items():
        known = applied.get(family)
        if known is None or (known.file_name, known.sha256) != (path.name, digests[family]):
            due.add(family)
    return due


def _audit(conn: Connection, settings: Settings | None, actor: Any, report: SyncReport) -> None:
    if settings is None:
        return

    AuditLedger(settings.audit_ledger_key).record_config_update(
        conn, actor or Actor.system("zones"), AUDIT_SECTION, report.counts
    )
