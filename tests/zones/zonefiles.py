"""Helpers for zone tests: the shared agency files and a tiny dBase III writer for made-up ones."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest

from tests.support import SHARED_DATA

ZONES_DIR = SHARED_DATA / "zones"
LAND = ZONES_DIR / "z_18mr25.dbf"
MARINE = ZONES_DIR / "mz20fe25.dbf"
PARTIAL = ZONES_DIR / "cs16ap26.dbf"
LAND_RECORDS = 4114
LAND_CODES = 4026  # 88 zones are drawn in two parts, one record each
MARINE_RECORDS = 565
PARTIAL_RECORDS = 3385

Field = tuple[str, str, int, int]  # name, type (C/N/F), width, decimals
PUBLIC_FIELDS: list[Field] = [
    ("STATE", "C", 2, 0),
    ("CWA", "C", 9, 0),
    ("TIME_ZONE", "C", 2, 0),
    ("FE_AREA", "C", 2, 0),
    ("ZONE", "C", 3, 0),
    ("NAME", "C", 254, 0),
    ("STATE_ZONE", "C", 5, 0),
    ("LON", "F", 19, 11),
    ("LAT", "F", 19, 11),
    ("SHORTNAME", "C", 32, 0),
]
MARINE_FIELDS: list[Field] = [
    ("ID", "C", 6, 0),
    ("WFO", "C", 3, 0),
    ("GL_WFO", "C", 3, 0),
    ("NAME", "C", 254, 0),
    ("LON", "N", 19, 11),
    ("LAT", "N", 19, 11),
]


def require_shared_data() -> None:
    """Skip the calling test when the shared agency files are not present."""
    if not LAND.exists() or not MARINE.exists() or not PARTIAL.exists():
        pytest.skip(f"shared zone files not found under {ZONES_DIR}")


def write_dbf(path: Path, fields: Sequence[Field], records: Iterable[Mapping[str, object]]) -> Path:
    """Write a dBase III table; values may be str, float, None or raw bytes (used as given)."""
    rows = list(records)
    record_length = 1 + sum(width for _, _, width, _ in fields)
    header_length = 32 + 32 * len(fields) + 1
    out = bytearray(
        struct.pack("<BBBBIHH20x", 0x03, 125, 3, 18, len(rows), header_length, record_length)
    )
    for name, kind, width, decimals in fields:
        out += struct.pack(
            "<11sc4xBB14x", name.encode("ascii"), kind.encode("ascii"), width, decimals
        )
    out += b"\r"
    for row in rows:
        out += b" "
        for name, kind, width, decimals in fields:
            out += _cell(row.get(name), kind, width, decimals)
    out += b"\x1a"
    path.write_bytes(bytes(out))
    return path


def _cell(value: object, kind: str, width: int, decimals: int) -> bytes:
    if isinstance(value, bytes):
        data = value
    elif value is None:
        data = b""
    elif kind == "C":
        data = str(value).encode("latin-1").ljust(width)
    else:
        data = f"{float(value):.{decimals}f}".encode("ascii").rjust(width)  # type: ignore[arg-type]
    if len(data) > width:
        raise ValueError(f"value {value!r} is wider than {width}")
    return data.ljust(width, b" ")


def public_row(state: str, zone: str, name: str, **extra: object) -> dict[str, object]:
    """Return one public-zone record for write_dbf."""
    return {"STATE": state, "ZONE": zone, "NAME": name, **extra}


def copy_shared(source: Path, target: Path) -> Path:
    """Copy a shared agency file to ``target`` (tests never modify the originals)."""
    shutil.copyfile(source, target)
    target.chmod(0o644)
    return target
