"""Read the agency's zone DBF files into one record shape, whatever schema a file uses.

Three zone schemas are recognised from their column names: public forecast zones (STATE, ZONE,
NAME, ...), marine and offshore zones (ID, WFO, GL_WFO, NAME, ...) and fire-weather zones, which
use the public schema in files named ``fz_*``. The partial-counties file (``cs*``: STATE, FIPS,
AREA_SAME, AREA_NAME, ...) has its own reader, :func:`load_partial_counties`.

Every problem is a ``ValueError`` naming the file, raised before anything touches the database:
an unknown schema (the message starts with ``Unrecognised zone DBF schema`` and lists the columns
found), a truncated or corrupt file, or a record that does not yield a valid UGC code.
"""

from __future__ import annotations

import re
import struct
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dbfread import DBF, FieldParser
from dbfread.exceptions import MissingMemoFile

from alertstation.zones.tables import column_widths, county_fips, wx_zones

ZONE_TYPES = ("public", "marine", "fire")
FAMILIES = ("public", "marine", "fire", "partial")
UGC_PATTERN = re.compile(r"^[A-Z]{2}Z\d{3}$")
PUBLIC_COLUMNS = frozenset({"STATE", "ZONE", "NAME"})
MARINE_COLUMNS = frozenset({"ID", "NAME"})
PARTIAL_COLUMNS = frozenset({"STATE", "FIPS", "AREA_SAME"})
# File-name prefixes of the agency's families (lower case); the first match wins.
NAME_PREFIXES = (
    ("fz", "fire"),
    ("z_", "public"),
    ("mz", "marine"),
    ("oz", "marine"),
    ("cs", "partial"),
)
# Files that declare no code page are decoded as Latin-1, which accepts every byte.
DEFAULT_ENCODING = "latin-1"
PROGRESS_EVERY = 500

Progress = Callable[[int, int], None]

_ZONE_WIDTHS = column_widths(wx_zones)
_COUNTY_WIDTHS = column_widths(county_fips)


@dataclass(frozen=True, slots=True)
class ZoneRecord:
    """One UGC zone as read from any zone DBF; absent columns are empty strings."""

    zone_code: str
    state_code: str
    zone_number: str
    cwa: str
    time_zone: str
    fe_area: str
    name: str
    state_zone: str
    longitude: float | None
    latitude: float | None
    short_name: str
    zone_type: str


@dataclass(frozen=True, slots=True)
class CountySubdivision:
    """One row of the partial-counties file: a county or a numbered part of one.

    ``same_code`` is the SAME location code PSSCCC; ``part`` (P) is 0 for a whole county.
    """

    same_code: str
    county_fips: str
    state_code: str
    county_name: str
    area_name: str
    cwa: str
    time_zone: str
    fe_area: str
    longitude: float | None
    latitude: float | None

    @property
    def part(self) -> int:
        """Return P, the subdivision digit of the SAME code (0 = the entire county)."""
        return int(self.same_code[0])


class TolerantFieldParser(FieldParser):  # type: ignore[misc]
    """Parse numeric fields that are blank, NUL-padded or unreadable as None instead of failing."""

    def parseN(self, field: Any, data: bytes) -> float | None:
        """Return the number in ``data`` as a float, None when there is none."""
        text = data.strip(b"\x00 *\t\r\n")
        if not text:
            return None
        try:
            return float(text.replace(b",", b"."))
        except ValueError:
            return None

    # dbfread looks parsers up as parse<type>: F (float) fields get the same treatment.
    parseF = parseN


def family_from_name(name: str) -> str | None:
    """Return the family a file name's prefix names (z_, fz, mz, oz, cs), None for others."""
    lowered = Path(name).name.lower()
    for prefix, family in NAME_PREFIXES:
        if lowered.startswith(prefix):
            return family
    return None


def read_columns(path: Path | str) -> list[str]:
    """Return the upper-cased column names of a DBF after checking it is whole."""
    return [field.name.upper() for field in _open_table(Path(path)).fields]


def detect_family(path: Path | str) -> str:
    """Decide from its columns (and, for fire-weather, its name) which family a DBF belongs to."""
    path = Path(path)
    columns = read_columns(path)
    return _family_of(path, columns, allow_partial=True)


def load_dbf(path: Path | str, *, progress: Progress | None = None) -> list[ZoneRecord]:
    """Read a public, marine/offshore or fire-weather zone DBF into ZoneRecords.

    One record is returned per DBF record, in file order; a zone drawn in several parts appears
    once per part (the sync keeps the first). ``progress(done, total)`` is called as records are
    read.
    """
    path = Path(path)
    table = _open_table(path)
    columns = [field.name.upper() for field in table.fields]
    zone_type = _family_of(path, columns, allow_partial=False)
    convert = _marine_record if zone_type == "marine" else _public_record
    records = []
    for number, row in _rows(path, table, progress):
        record = convert(row, zone_type)
        _check_zone(path, number, record)
        records.append(record)
    return records


def load_partial_counties(
    path: Path | str, *, progress: Progress | None = None
) -> list[CountySubdivision]:
    """Read the partial-counties DBF (cs*.dbf) into CountySubdivision records, in file order.

    A county drawn as several whole-county rows that name different places (``Niihau in
    Kauai`` and ``Kauai in Kauai`` for ``015007``) gets the county's own name in
    ``county_name`` on each of those rows; ``area_name`` keeps what the row said.
    """
    path = Path(path)
    table = _open_table(path)
    columns = {field.name.upper() for field in table.fields}
    if not PARTIAL_COLUMNS <= columns:
        raise ValueError(
            f"Unrecognised partial-counties DBF schema in {path.name}: columns found: "
            f"{', '.join(sorted(columns)) or 'none'}; expected {', '.join(sorted(PARTIAL_COLUMNS))}"
        )
    records = []
    for number, row in _rows(path, table, progress):
        same = _text(row.get("AREA_SAME"))
        fips = _text(row.get("FIPS")) or same[1:]
        if not (re.fullmatch(r"\d{6}", same) and re.fullmatch(r"\d{5}", fips)):
            raise ValueError(
                f"{path.name}: record {number} has AREA_SAME {same!r} and FIPS {fips!r}; "
                "expected six and five digits"
            )
        record = CountySubdivision(
            same_code=same,
            county_fips=fips,
            state_code=_text(row.get("STATE")).upper(),
            county_name=_text(row.get("COUNTYNAME")),
            area_name=_text(row.get("AREA_NAME")),
            cwa=_text(row.get("CWA")).upper(),
            time_zone=_text(row.get("TIME_ZONE")),
            fe_area=_text(row.get("FE_AREA")),
            longitude=_number(row.get("LON")),
            latitude=_number(row.get("LAT")),
        )
        _check_widths(path, number, record, _COUNTY_WIDTHS)
        records.append(record)
    return settle_county_names(records)


def settle_county_names(records: Sequence[CountySubdivision]) -> list[CountySubdivision]:
    """Give every whole-county row (P = 0) of a county one name: the county's own.

    The agency's file repeats the whole-county code once per island or mainland piece, and each
    repeat names its piece (``Niihau in Kauai``, ``Lower Keys in Monroe``, ``New York
    (Manhattan)``). Where the rows of one code disagree, the name becomes the county name of the
    county's numbered parts when it has any, else the name the pieces share:
    ``"<piece> in <county>"`` gives ``<county>``, a trailing ``(…)`` is dropped, and the
    candidate that ends the most piece names wins (``Monroe`` over ``Mainland Monroe``).
    Rows whose names already agree, and the numbered parts, are returned unchanged.
    """
    whole: dict[str, set[str]] = defaultdict(set)
    part_names: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        if record.part == 0:
            whole[record.county_fips].add(record.county_name)
        elif record.county_name:
            part_names[record.county_fips][record.county_name] += 1
    settled = {
        fips: _county_name(sorted(names), part_names.get(fips))
        for fips, names in whole.items()
        if len(names) > 1
    }
    return [
        replace(record, county_name=settled[record.county_fips])
        if record.part == 0 and record.county_fips in settled
        else record
        for record in records
    ]


_PIECE_OF = re.compile(r"^.+?\s+in\s+(?P<county>.+)$")
_TRAILING_NOTE = re.compile(r"\s*\([^()]*\)\s*$")


def _county_name(names: list[str], from_parts: Counter[str] | None) -> str:
    if from_parts:
        return from_parts.most_common(1)[0][0]
    candidates = []
    for name in names:
        match = _PIECE_OF.match(name)
        candidate = _TRAILING_NOTE.sub("", match["county"] if match else name).strip()
        if candidate:
            candidates.append(candidate)
    if not candidates:
        return names[0]

    def ends(candidate: str) -> int:
        return sum(
            1
            for name in names
            if _TRAILING_NOTE.sub("", name) == candidate
            or _TRAILING_NOTE.sub("", name).endswith(" " + candidate)
        )

    # Most piece names ended by the candidate; then the shorter; then alphabetical order.
    return min(candidates, key=lambda c: (-ends(c), len(c), c))


def _open_table(path: Path) -> DBF:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(32)
    except OSError as ex:
        raise ValueError(f"cannot read zone DBF {path}: {ex.strerror or ex}") from None
    if len(head) < 32:
        raise ValueError(f"{path.name} is not a DBF file: only {len(head)} bytes")
    count, header_length, record_length = struct.unpack("<IHH", head[4:12])
    if header_length < 33 or record_length < 2 or header_length > size:
        raise ValueError(f"{path.name} is not a DBF file or its header is corrupt")
    encoding = DEFAULT_ENCODING if head[29] == 0 else None
    try:
        table = DBF(
            str(path),
            encoding=encoding,
            ignorecase=False,
            parserclass=TolerantFieldParser,
            recfactory=dict,
            char_decode_errors="replace",
        )
    except (ValueError, struct.error, UnicodeDecodeError) as ex:
        raise ValueError(f"{path.name} is not a readable DBF file: {ex}") from None
    except MissingMemoFile:
        # A memo, binary, general or picture field (M, B, G, P) lives in a side file that no
        # zone DBF has; dbfread's OSError would otherwise escape as a server error.
        raise ValueError(
            f"{path.name} declares memo fields (type M, B, G or P); zone DBFs have none"
        ) from None
    if not table.fields or sum(field.length for field in table.fields) + 1 != record_length:
        raise ValueError(f"{path.name} has a corrupt DBF header: field widths disagree")
    expected = header_length + count * record_length
    if size < expected:
        raise ValueError(
            f"{path.name} is truncated: its header promises {count} records "
            f"({expected} bytes) but the file has {size} bytes"
        )
    return table


def _rows(
    path: Path, table: DBF, progress: Progress | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    total = int(table.header.numrecords)
    number = 0
    try:
        for number, raw in enumerate(table, start=1):
            yield number, {key.upper(): value for key, value in raw.items()}
            if progress is not None and number % PROGRESS_EVERY == 0:
                progress(number, total)
    except (ValueError, struct.error, UnicodeDecodeError) as ex:
        raise ValueError(f"{path.name}: record {number + 1} is unreadable: {ex}") from None
    if progress is not None:
        progress(number, total)


def _family_of(path: Path, columns: list[str], *, allow_partial: bool) -> str:
    found = set(columns)
    if PUBLIC_COLUMNS <= found:
        return "fire" if family_from_name(path.name) == "fire" else "public"
    if MARINE_COLUMNS <= found:
        return "marine"
    if allow_partial and PARTIAL_COLUMNS <= found:
        return "partial"
    hint = (
        " (a partial-counties file: read it with load_partial_counties)"
        if (PARTIAL_COLUMNS <= found)
        else ""
    )
    raise ValueError(
        f"Unrecognised zone DBF schema in {path.name}: columns found: "
        f"{', '.join(columns) or 'none'}; expected STATE, ZONE, NAME (public or fire-weather) "
        f"or ID, NAME (marine){hint}"
    )


def _public_record(row: dict[str, Any], zone_type: str) -> ZoneRecord:
    state = _text(row.get("STATE")).upper()
    zone = _text(row.get("ZONE"))
    number = zone.zfill(3) if zone.isdigit() else zone
    return ZoneRecord(
        zone_code=f"{state}Z{number}",
        state_code=state,
        zone_number=number,
        cwa=_text(row.get("CWA")).upper(),
        time_zone=_text(row.get("TIME_ZONE")),
        fe_area=_text(row.get("FE_AREA")),
        name=_text(row.get("NAME")),
        state_zone=_text(row.get("STATE_ZONE")).upper(),
        longitude=_number(row.get("LON")),
        latitude=_number(row.get("LAT")),
        short_name=_text(row.get("SHORTNAME")),
        zone_type=zone_type,
    )


def _marine_record(row: dict[str, Any], zone_type: str) -> ZoneRecord:
    code = _text(row.get("ID")).upper()
    cwa = _text(row.get("GL_WFO")) or _text(row.get("WFO"))
    return ZoneRecord(
        zone_code=code,
        state_code=code[:2],
        # The digits after the zone letter, so zone_code == state_code + "Z" + zone_number
        # holds for every family (docs/zones.md explains the choice).
        zone_number=code[3:],
        cwa=cwa.upper(),
        time_zone="",
        fe_area="",
        name=_text(row.get("NAME")),
        state_zone="",
        longitude=_number(row.get("LON")),
        latitude=_number(row.get("LAT")),
        short_name="",
        zone_type=zone_type,
    )


def _check_zone(path: Path, number: int, record: ZoneRecord) -> None:
    if not UGC_PATTERN.match(record.zone_code):
        raise ValueError(
            f"{path.name}: record {number} gives zone code {record.zone_code!r}, "
            "which is not of the form SSZNNN"
        )
    _check_widths(path, number, record, _ZONE_WIDTHS)


def _check_widths(path: Path, number: int, record: Any, widths: dict[str, int]) -> None:
    for name, width in widths.items():
        value = getattr(record, name, None)
        if isinstance(value, str) and len(value) > width:
            raise ValueError(
                f"{path.name}: record {number} has a {name} of {len(value)} characters; "
                f"the catalog holds at most {width}"
            )


def _text(value: Any) -> str:
    if value is None:
        return ""
    return str(value).replace("\x00", "").strip()


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None
