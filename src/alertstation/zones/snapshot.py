"""The bundled land-zone snapshot: a first-boot catalog for a station with no files and no network.

``land-zones.csv.gz`` (package data beside this module) holds every record of the agency's
public-zone DBF, one CSV row per record with the :class:`~alertstation.zones.loader.ZoneRecord`
fields. ``scripts/make-zone-snapshot.py`` writes it from the DBF (the DBF stays out of git).
:func:`seed_from_snapshot` loads it into an empty catalog; a DBF placed in the assets folder
later replaces it through :func:`alertstation.zones.service.ensure_catalog`, which sees a
different source file.
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
from collections.abc import Iterable
from dataclasses import astuple, fields
from importlib.resources import as_file, files
from pathlib import Path
from typing import Final

from sqlalchemy import Engine

from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.zones.catalog import ZONES_GENERATION
from alertstation.zones.loader import UGC_PATTERN, ZoneRecord
from alertstation.zones.service import SyncReport, count_zones, sync_catalog

log = logging.getLogger("alertstation.zones")

SNAPSHOT_FILE: Final[str] = "land-zones.csv.gz"
COLUMNS: Final[tuple[str, ...]] = tuple(f.name for f in fields(ZoneRecord))
_FLOATS: Final[frozenset[str]] = frozenset({"longitude", "latitude"})


def write_snapshot(records: Iterable[ZoneRecord], out: Path) -> int:
    """Write ``records`` as gzipped CSV to ``out`` (byte-identical for the same records)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    count = 0
    for record in records:
        writer.writerow("" if value is None else value for value in astuple(record))
        count += 1
    with out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(text.getvalue().encode("utf-8"))
    return count


def read_snapshot(path: Path) -> list[ZoneRecord]:
    """Read a snapshot file; ValueError naming the row for anything malformed."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path.name}: expected the columns {', '.join(COLUMNS)}")
        records = []
        for number, row in enumerate(reader, start=2):
            values = {
                name: (float(row[name]) if row[name] else None) if name in _FLOATS else row[name]
                for name in COLUMNS
            }
            record = ZoneRecord(**values)  # type: ignore[arg-type]
            if not UGC_PATTERN.match(record.zone_code) or record.zone_type != "public":
                raise ValueError(f"{path.name} line {number}: not a public zone record")
            records.append(record)
    return records


def seed_from_snapshot(engine: Engine) -> SyncReport | None:
    """Load the bundled snapshot into an empty catalog; None when the catalog has zones."""
    with engine.connect() as conn:
        if count_zones(conn) > 0:
            return None
    with as_file(files("alertstation.zones") / SNAPSHOT_FILE) as path:
        records = read_snapshot(path)
        with begin_write(engine) as conn:
            # First: serialises hosts starting together (PostgreSQL waits on the row, SQLite
            # writes one at a time); the count below then sees a seed committed meanwhile.
            bump_generation(conn, ZONES_GENERATION)
            if count_zones(conn) > 0:  # another process seeded it meanwhile
                return None
            report = sync_catalog(conn, {"public": records}, sources={"public": path})
    log.info("zone catalog seeded from the bundled snapshot: %s", "; ".join(report.lines()))
    return report
