"""The bundled county-name snapshot: every county and named county part, before any DBF sync.

``county-names.csv.gz`` (package data beside this module) holds one row per SAME location code of
the agency's partial-counties file (``cs*.dbf``): ``same_code, state_code, name``. A whole-county
row (P = 0) carries the county's name, a part's row (P = 1..9) the part's name.
``scripts/make-county-snapshot.py`` writes it from the DBF (the DBF stays out of git), as
``scripts/make-zone-snapshot.py`` writes the land-zone snapshot.

:func:`bundled_county_index` reads it once per process into a :class:`CountyIndex`; place names
(:mod:`alertstation.zones.places`) fall back to it for any county the synced catalog lacks, so a
fresh station names every county in plain-language text.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib.resources import as_file, files
from pathlib import Path
from typing import Final

from alertstation.zones.fips import County, CountyIndex
from alertstation.zones.loader import CountySubdivision

SNAPSHOT_FILE: Final[str] = "county-names.csv.gz"
COLUMNS: Final[tuple[str, ...]] = ("same_code", "state_code", "name")
_SAME: Final[re.Pattern[str]] = re.compile(r"^[0-9]{6}$")
_STATE: Final[re.Pattern[str]] = re.compile(r"^[A-Z]{2}$")


def snapshot_rows(records: Iterable[CountySubdivision]) -> list[tuple[str, str, str]]:
    """Return one (same_code, state_code, name) row per SAME code, sorted by code.

    Counties and parts are named as the catalog sync names them: every county gets a row
    ``0SSCCC`` from its whole-county row, or from any row when the file draws it only as
    numbered parts; a part's row carries its area name (else the county's); the first row of a
    code wins.
    """
    counties: dict[str, tuple[str, str, str]] = {}
    parts: dict[str, tuple[str, str, str]] = {}
    for record in sorted(records, key=lambda r: r.part != 0):
        name = record.county_name or record.area_name
        if name:
            counties.setdefault(
                record.county_fips, (f"0{record.county_fips}", record.state_code, name)
            )
        part_name = record.area_name or record.county_name
        if record.part != 0 and part_name:
            parts.setdefault(record.same_code, (record.same_code, record.state_code, part_name))
    rows = {row[0]: row for row in [*counties.values(), *parts.values()]}
    return [rows[code] for code in sorted(rows)]


def write_county_snapshot(records: Iterable[CountySubdivision], out: Path) -> int:
    """Write the snapshot of ``records`` to ``out`` (byte-identical for the same records)."""
    rows = snapshot_rows(records)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    with out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(text.getvalue().encode("utf-8"))
    return len(rows)


def read_county_snapshot(path: Path) -> CountyIndex:
    """Read a snapshot into a CountyIndex; ValueError naming the line for anything malformed."""
    counties: dict[str, County] = {}
    subdivisions: dict[str, str] = {}
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        if tuple(next(reader, ())) != COLUMNS:
            raise ValueError(f"{path.name}: expected the columns {', '.join(COLUMNS)}")
        for number, row in enumerate(reader, start=2):
            if len(row) != 3 or not _SAME.match(row[0]) or not _STATE.match(row[1]) or not row[2]:
                raise ValueError(f"{path.name} line {number}: expected same_code,state_code,name")
            code, state, name = row
            if code[0] == "0":
                counties[code[1:]] = County(code[1:], state, name)
            else:
                subdivisions[code] = name
    return CountyIndex(counties, subdivisions)


@lru_cache(maxsize=1)
def bundled_county_index() -> CountyIndex:
    """Return the bundled snapshot's counties and parts (read once per process)."""
    with as_file(files("alertstation.zones") / SNAPSHOT_FILE) as path:
        return read_county_snapshot(path)
