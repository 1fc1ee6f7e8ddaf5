"""GeoIP lookups: the location (Country/City) and ASN databases the station's settings name.

The station reads two MaxMind DB files: a location database (Country or City; both fill the one
location slot) and an ASN database. The traffic settings ``geoip_database_path`` and
``geoip_asn_database_path`` say where they are; the traffic package owns those settings and hands
them down here as a ``GeoipPaths`` keeper per data directory (``keep_paths``; a lower layer
cannot read them itself). A slot with no path set, or a data directory with no keeper, uses its
file under the data directory: ``<data_dir>/geoip/location.mmdb`` and
``<data_dir>/geoip/asn.mmdb``, which is also where an upload is stored before the keeper points
the setting at it.

``GeoLocator`` answers ``locate(address)`` and ``asn(address)`` with the ``geoip2`` reader. It
opens a database on first use, reopens it when the file changes (an upload replaces it
atomically) and closes it on ``close()``. Without the ``geoip2`` package, or without a database,
every lookup answers None. ``read_metadata`` decodes a file's metadata without the reader, so an
upload can still be typed and accepted when the package is missing.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import struct
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from sqlalchemy import Connection

from alertstation import lazy

MARKER = b"\xab\xcd\xefMaxMind.com"
LOCATION = "location"
ASN = "asn"
SLOTS = (LOCATION, ASN)
GEOIP_DIR = "geoip"
FILE_NAMES = {LOCATION: "location.mmdb", ASN: "asn.mmdb"}
AUDIT_FIELDS = {LOCATION: "location_database", ASN: "asn_database"}
_METADATA_WINDOW = 128 * 1024  # the format puts the metadata in the file's last 128 KiB
# Maps and arrays nested deeper than this refuse the metadata (real metadata nests 2 deep).
MAX_METADATA_DEPTH = 16


class NotMaxMindDatabase(ValueError):
    """The bytes are not a MaxMind DB file, or one of a kind the station does not use."""


def load_reader() -> ModuleType | None:
    """Return ``geoip2.database`` when the package can be imported, else None."""
    try:
        return lazy.load("geoip2.database")
    except ImportError:
        return None


def geoip_dir(data_dir: Path) -> Path:
    """Return the folder holding the station's GeoIP databases."""
    return data_dir / GEOIP_DIR


def slot_path(data_dir: Path, slot: str) -> Path:
    """Return where the database of ``slot`` (``location`` or ``asn``) lives."""
    return geoip_dir(data_dir) / FILE_NAMES[slot]


# --- where each slot's database is ---------------------------------------------------------


class GeoipPaths(Protocol):
    """The settings that say where each slot's database is, and how an upload points them."""

    def configured(self) -> dict[str, str | None]:
        """Return each slot's configured path, None where none is set."""
        ...

    def point(self, conn: Connection, slot: str, path: Path) -> list[str]:
        """Point ``slot``'s setting at ``path`` in ``conn``'s transaction; return the changed
        setting names."""
        ...

    def refresh(self) -> None:
        """Forget what was read, after a change was committed."""
        ...


class _FixedPaths:
    """The paths a parent process resolved, for a child process that has no settings keeper."""

    def __init__(self, paths: dict[str, str | None]) -> None:
        self._paths = dict(paths)

    def configured(self) -> dict[str, str | None]:
        return dict(self._paths)

    def point(self, conn: Connection, slot: str, path: Path) -> list[str]:
        self._paths[slot] = str(path)
        return []

    def refresh(self) -> None:
        pass


_keepers: dict[Path, GeoipPaths] = {}


def keep_paths(data_dir: Path, keeper: GeoipPaths) -> None:
    """Make ``keeper`` the source of the database paths of ``data_dir`` in this process."""
    _keepers[Path(data_dir)] = _keepers[Path(data_dir).resolve()] = keeper


def paths_keeper(data_dir: Path) -> GeoipPaths | None:
    """Return the keeper of ``data_dir``'s database paths, None when none was given (the
    folder as given is tried first: a lookup's locator holds the resolved one, no system call)."""
    found = _keepers.get(Path(data_dir))
    return found if found is not None else _keepers.get(Path(data_dir).resolve())


def database_paths(data_dir: Path) -> dict[str, Path]:
    """Return where each slot's database is read: its configured path, else its own file."""
    keeper = paths_keeper(data_dir)
    configured = keeper.configured() if keeper is not None else {}
    return {
        slot: Path(configured[slot]) if configured.get(slot) else slot_path(data_dir, slot)
        for slot in SLOTS
    }


# --- metadata without the reader ------------------------------------------------------------


def database_kind(database_type: str) -> str:
    """Return ``City``, ``Country`` or ``ASN`` for a metadata ``database_type``; else raise."""
    for kind in ("ASN", "City", "Country"):
        if kind.casefold() in database_type.casefold():
            return kind
    raise NotMaxMindDatabase(
        f"unsupported database type {database_type!r}: upload a Country, City or ASN database"
    )


def slot_of(kind: str) -> str:
    """Return the slot a database kind fills: Country and City share ``location``."""
    return ASN if kind == "ASN" else LOCATION


def read_metadata(path: Path) -> dict[str, Any]:
    """Return the metadata map at the end of a MaxMind DB file; NotMaxMindDatabase otherwise."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(max(0, size - _METADATA_WINDOW))
        tail = handle.read()
    start = tail.rfind(MARKER)
    if start < 0:
        raise NotMaxMindDatabase("not a MaxMind DB file (no metadata marker)")
    try:
        metadata, _ = _decode(tail, start + len(MARKER))
    except (IndexError, ValueError, UnicodeDecodeError, struct.error):
        raise NotMaxMindDatabase("the MaxMind DB metadata cannot be read") from None
    if not isinstance(metadata, dict) or not isinstance(metadata.get("database_type"), str):
        raise NotMaxMindDatabase("the MaxMind DB metadata has no database_type")
    return metadata


def _decode(data: bytes, offset: int, depth: int = 0) -> tuple[Any, int]:
    """Decode one value of the MaxMind DB data format (the subset metadata uses); ValueError
    when maps and arrays nest deeper than ``MAX_METADATA_DEPTH``."""
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata nested deeper than {MAX_METADATA_DEPTH}")
    control = data[offset]
    offset += 1
    kind = control >> 5
    if kind == 0:  # extended type
        kind = 7 + data[offset]
        offset += 1
    if kind == 1:
        raise ValueError("pointers are not expected in metadata")
    size = control & 0x1F
    if size >= 29:
        extra = size - 28
        value = int.from_bytes(data[offset : offset + extra], "big")
        size = (29, 285, 65821)[extra - 1] + value
        offset += extra
    return _decode_body(data, offset, kind, size, depth)


def _decode_body(data: bytes, offset: int, kind: int, size: int, depth: int) -> tuple[Any, int]:
    if kind == 7:  # map
        result: dict[str, Any] = {}
        for _ in range(size):
            key, offset = _decode(data, offset, depth + 1)
            result[str(key)], offset = _decode(data, offset, depth + 1)
        return result, offset
    if kind == 11:  # array
        items = []
        for _ in range(size):
            item, offset = _decode(data, offset, depth + 1)
            items.append(item)
        return items, offset
    if kind == 14:  # boolean: the size is the value
        return bool(size), offset
    end = offset + size
    if end > len(data):
        raise ValueError("value runs past the end of the file")
    return _scalar(data[offset:end], kind), end


def _scalar(raw: bytes, kind: int) -> Any:
    if kind == 2:
        return raw.decode("utf-8")
    if kind == 4:
        return raw
    if kind in (3, 15):
        return struct.unpack(">d" if kind == 3 else ">f", raw)[0]
    if kind in (5, 6, 9, 10):
        return int.from_bytes(raw, "big")
    if kind == 8:
        return int.from_bytes(raw, "big", signed=len(raw) == 4)
    raise ValueError(f"unknown data type {kind}")


@dataclass(frozen=True)
class DatabaseInfo:
    """What the station knows about one installed database."""

    slot: str
    type: str
    database_type: str
    build_date: datetime | None
    size: int
    modified_at: datetime
    file: str
    path: str

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "slot": self.slot,
            "type": self.type,
            "database_type": self.database_type,
            "build_date": self.build_date,
            "size": self.size,
            "modified_at": self.modified_at,
            "file": self.file,
            "path": self.path,
        }


def describe(path: Path, slot: str) -> DatabaseInfo:
    """Return the type, build date and size of the database file at ``path``."""
    metadata = read_metadata(path)
    epoch = metadata.get("build_epoch")
    stat = path.stat()
    return DatabaseInfo(
        slot=slot,
        type=database_kind(metadata["database_type"]),
        database_type=metadata["database_type"],
        build_date=datetime.fromtimestamp(epoch, UTC) if isinstance(epoch, int) else None,
        size=stat.st_size,
        modified_at=datetime.fromtimestamp(stat.st_mtime, UTC),
        file=path.name,
        path=str(path),
    )


def installed(data_dir: Path) -> dict[str, DatabaseInfo | None]:
    """Return each slot's database (where the settings point), None for an empty slot or an
    unreadable file."""
    found: dict[str, DatabaseInfo | None] = {}
    for slot, path in database_paths(data_dir).items():
        try:
            found[slot] = describe(path, slot)
        except (OSError, NotMaxMindDatabase):
            found[slot] = None
    return found


# --- lookups --------------------------------------------------------------------------------


def lookup_address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Return the public single address in ``value``; None for ranges, local or bad text."""
    if "/" in value:
        return None
    try:
        address = ipaddress.ip_address(value.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    local = (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
    return None if local else address


class _Slot:
    """One database file and the reader open on it, reopened when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.reader: Any = None
        self.kind = ""
        self._stamp: tuple[int, int, int] | None = None

    def current(self, module: ModuleType, path: Path) -> Any:
        """Return a reader on the file at ``path`` as it is now; None when there is no usable
        file. A new path (the setting changed) closes the reader on the old one."""
        if path != self.path:
            self.close()
            self.path = path
        try:
            stat = os.stat(self.path)
        except OSError:
            self.close()
            return None
        stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if stamp != self._stamp:
            self.close()
            self._stamp = stamp
            try:
                reader = module.Reader(str(self.path))
            except (OSError, ValueError):
                return None  # a broken file stays unused until it changes again
            try:
                self.kind = database_kind(reader.metadata().database_type)
            except NotMaxMindDatabase:
                reader.close()
                return None
            self.reader = reader
        return self.reader

    def close(self) -> None:
        """Close the reader, if one is open."""
        if self.reader is not None:
            self.reader.close()
        self.reader = None
        self.kind = ""
        self._stamp = None


class GeoLocator:
    """Answer location and ASN lookups from the databases under one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock = threading.Lock()
        self._slots = {slot: _Slot(slot_path(data_dir, slot)) for slot in SLOTS}

    def __reduce__(self) -> tuple[Any, ...]:
        """Unpickle as the receiving process's own locator of the same folder (``locator_for``),
        reading the databases this process reads: the open readers stay behind."""
        paths = {slot: str(path) for slot, path in database_paths(self.data_dir).items()}
        return (_unpickled_locator, (self.data_dir, paths))

    def locate(self, address: str) -> dict[str, Any] | None:
        """Return flag, country, region, region_code and city of a public address, or None."""
        target = lookup_address(address)
        module = load_reader() if target is not None else None
        if module is None:
            return None
        path = database_paths(self.data_dir)[LOCATION]
        with self._lock:
            slot = self._slots[LOCATION]
            reader = slot.current(module, path)
            if reader is None:
                return None
            record = _lookup(reader.city if slot.kind == "City" else reader.country, target)
        return None if record is None else _location(record)

    def asn(self, address: str) -> dict[str, Any] | None:
        """Return the autonomous system number and organisation of a public address, or None."""
        target = lookup_address(address)
        module = load_reader() if target is not None else None
        if module is None:
            return None
        path = database_paths(self.data_dir)[ASN]
        with self._lock:
            reader = self._slots[ASN].current(module, path)
            if reader is None:
                return None
            record = _lookup(reader.asn, target)
        if record is None or record.autonomous_system_number is None:
            return None
        return {
            "asn": record.autonomous_system_number,
            "org": record.autonomous_system_organization,
        }

    def close(self) -> None:
        """Close every open reader (a later lookup opens them again)."""
        with self._lock:
            for slot in self._slots.values():
                slot.close()


def _lookup(method: Any, address: Any) -> Any:
    not_found = lazy.load("geoip2.errors").AddressNotFoundError
    invalid = lazy.load("maxminddb.errors").InvalidDatabaseError
    try:
        return method(address)
    except (not_found, invalid, ValueError, TypeError):
        return None


def _location(record: Any) -> dict[str, Any] | None:
    country = record.country if record.country.iso_code else record.registered_country
    subdivision = getattr(record, "subdivisions", None)
    region = subdivision.most_specific if subdivision else None
    city = getattr(record, "city", None)
    location = {
        "flag": country.iso_code,
        "country": country.name,
        "region": region.name if region is not None else None,
        "region_code": region.iso_code if region is not None else None,
        "city": city.name if city is not None else None,
    }
    return location if any(location.values()) else None


# --- one locator per data directory ---------------------------------------------------------

_locators: dict[Path, GeoLocator] = {}
_locators_lock = threading.Lock()


def locator_for(data_dir: Path) -> GeoLocator:
    """Return this process's locator for ``data_dir``, made on first use."""
    key = Path(data_dir).resolve()
    with _locators_lock:
        locator = _locators.get(key)
        if locator is None:
            locator = _locators[key] = GeoLocator(key)
        return locator


def _unpickled_locator(data_dir: Path, paths: dict[str, str | None]) -> GeoLocator:
    """Return this process's locator of ``data_dir``; without a keeper of its own, it reads the
    databases at ``paths`` (those the sending process read)."""
    if paths_keeper(data_dir) is None:
        keep_paths(data_dir, _FixedPaths(paths))
    return locator_for(data_dir)


def close_locators() -> None:
    """Close and forget every locator of this process."""
    with _locators_lock:
        locators = list(_locators.values())
        _locators.clear()
    for locator in locators:
        locator.close()


atexit.register(close_locators)
