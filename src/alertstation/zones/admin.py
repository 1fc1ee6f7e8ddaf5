"""Zone catalog administration: what is loaded, uploads, searches and the code picker."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import Connection, func, select

from alertstation.http.uploads import copy_limited, staging_folder
from alertstation.settings import Settings
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.loader import FAMILIES, ZoneRecord, detect_family, family_from_name
from alertstation.zones.resolver import resolve_dbf_paths
from alertstation.zones.service import count_zones, load_files, read_sources
from alertstation.zones.tables import county_fips

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.dbf$", re.IGNORECASE)

# Marine zone code prefixes (first two letters) and the waters they cover, for the picker.
MARINE_AREAS = {
    "AM": "Western Atlantic, Caribbean and Puerto Rico",
    "AN": "Western North Atlantic",
    "GM": "Gulf of America",
    "LC": "Lake St. Clair",
    "LE": "Lake Erie",
    "LH": "Lake Huron",
    "LM": "Lake Michigan",
    "LO": "Lake Ontario",
    "LS": "Lake Superior",
    "PH": "Central Pacific (Hawaii)",
    "PK": "Alaska waters",
    "PM": "Western Pacific (Guam, Marianas)",
    "PS": "South Pacific (American Samoa)",
    "PZ": "Eastern North Pacific",
    "SL": "St. Lawrence River",
}


@dataclass(frozen=True)
class FamilyInfo:
    """What the catalog holds for one family, and which file it would load."""

    family: str
    active_path: str | None
    file_size: int | None
    dbf_records: int | None
    database_rows: int
    cache_entries: int
    applied_file: str | None
    applied_at: Any


def catalog_info(conn: Connection, settings: Settings, catalog: ZoneCatalog) -> list[FamilyInfo]:
    """Describe every family: resolved file, its size and record count, rows, cached entries."""
    paths = resolve_dbf_paths(settings.assets_dir, env_path=settings.wx_zone_dbf_path)
    applied = read_sources(conn)
    zones = catalog.index().zones if catalog.size else {}
    infos = []
    for family in FAMILIES:
        path = paths.get(family)
        exists = path is not None and path.is_file()
        if family == "partial":
            rows = int(conn.execute(select(func.count()).select_from(county_fips)).scalar_one())
            cached = len(catalog.county_index().counties) if catalog.size else 0
        else:
            rows = count_zones(conn, family)
            cached = sum(1 for (_, zone_type) in zones if zone_type == family)
        source = applied.get(family)
        infos.append(
            FamilyInfo(
                family=family,
                active_path=str(path) if path else None,
                file_size=path.stat().st_size if exists and path else None,
                dbf_records=dbf_record_count(path) if exists and path else None,
                database_rows=rows,
                cache_entries=cached,
                applied_file=source.file_name if source else None,
                applied_at=source.applied_at if source else None,
            )
        )
    return infos


def dbf_record_count(path: Path) -> int | None:
    """Return the record count a DBF header declares (reads 8 bytes), None when unreadable."""
    try:
        with path.open("rb") as handle:
            header = handle.read(8)
    except OSError:
        return None
    return int.from_bytes(header[4:8], "little") if len(header) == 8 else None


def upload_name(filename: str | None) -> str:
    """Return the file name an upload is saved under; ValueError unless it is a plain .dbf name."""
    name = Path((filename or "").replace("\\", "/")).name
    if not _SAFE_NAME.match(name):
        raise ValueError(
            "upload a single .dbf file whose name uses letters, digits, '.', '_' or '-' "
            "(for example z_18mr25.dbf)"
        )
    return name


def receive_upload(stream: BinaryIO, assets_dir: Path, filename: str | None) -> tuple[str, Path]:
    """Check and install an uploaded DBF; return its family and where it now lives.

    The bytes go to a private folder inside the assets directory under the upload's own name
    (the name decides public vs fire-weather), are read in full with the loader a sync uses, and
    only then move into place; a bad upload leaves the assets directory as it was.
    """
    name = upload_name(filename)
    with staging_folder(assets_dir) as staging:
        staged = staging / name
        if copy_limited(stream, staged, MAX_UPLOAD_BYTES) == 0:
            raise ValueError("the uploaded file is empty")
        family = family_from_name(name) or detect_family(staged)
        load_files({family: staged})
        target = assets_dir / name
        os.replace(staged, target)
        return family, target


def search_zones(
    catalog: ZoneCatalog,
    *,
    query: str = "",
    zone_type: str | None = None,
    state: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[int, list[ZoneRecord]]:
    """Find zones whose code starts with, or whose name contains, the query; return total, page."""
    needle = query.strip().casefold()
    matches = sorted(
        _matching(catalog.index().zones.values(), needle, zone_type, (state or "").upper()),
        key=lambda r: (r.zone_code, r.zone_type),
    )
    return len(matches), matches[offset : offset + limit]


def _matching(records: Any, needle: str, zone_type: str | None, state: str) -> Iterator[ZoneRecord]:
    for record in records:
        if zone_type and record.zone_type != zone_type:
            continue
        if state and record.state_code != state:
            continue
        if needle and not (
            record.zone_code.casefold().startswith(needle) or needle in record.name.casefold()
        ):
            continue
        yield record


def county_groups(catalog: ZoneCatalog) -> list[dict[str, Any]]:
    """Group SAME county codes by state: each whole county ``0SSCCC``, then its named parts."""
    index = catalog.county_index()
    parts: dict[str, list[tuple[str, str]]] = {}
    for same_code, name in sorted(index.subdivisions.items()):
        if same_code[0] != "0":
            parts.setdefault(same_code[1:], []).append((same_code, name))
    groups: dict[str, list[dict[str, str]]] = {}
    for fips, county in sorted(index.counties.items(), key=lambda item: (item[1].name, item[0])):
        if fips.endswith("000"):
            continue  # a whole-state row names no county
        zones = groups.setdefault(county.state_code, [])
        zones.append({"code": f"0{fips}", "name": county.name})
        for same_code, name in parts.get(fips, []):
            zones.append({"code": same_code, "name": f"{name} (part of {county.name})"})
    return [{"key": key, "label": key, "zones": groups[key]} for key in sorted(groups)]


def picker_groups(catalog: ZoneCatalog, family: str) -> list[dict[str, Any]]:
    """Group codes for the picker: counties and land and fire zones by state, marine by area."""
    if family == "county":
        return county_groups(catalog)
    zone_type = {"land": "public", "public": "public", "fire": "fire", "marine": "marine"}.get(
        family
    )
    if zone_type is None:
        raise ValueError("family must be county, land, fire or marine")
    groups: dict[str, list[ZoneRecord]] = {}
    for record in catalog.index().zones.values():
        if record.zone_type == zone_type:
            groups.setdefault(record.state_code, []).append(record)
    return [
        {
            "key": key,
            "label": MARINE_AREAS.get(key, key) if zone_type == "marine" else key,
            "zones": [
                {"code": r.zone_code, "name": r.name}
                for r in sorted(groups[key], key=lambda r: r.zone_code)
            ],
        }
        for key in sorted(groups)
    ]


def zone_as_dict(record: ZoneRecord) -> dict[str, Any]:
    """Return the JSON form of a catalog record."""
    return {name: getattr(record, name) for name in ZoneRecord.__dataclass_fields__}
