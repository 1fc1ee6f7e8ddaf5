"""Fuzz the zone DBF loader: real headers with mutated records and mutated headers.

The upload route and ``zones sync`` read a file through ``load_files`` (which calls ``load_dbf``
or ``load_partial_counties``) and promise a ``ValueError`` naming the file for anything they
cannot use. Samples are the first records of the agency's real files (public, marine and
partial counties, from ``/work/shared/data``) behind their real headers, and a small table
written here, so the test also runs where the shared files are absent. Bytes are flipped,
cut, inserted and overwritten with extreme 32-bit words (record counts, header and record
lengths), in the header and in the records.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.zones.loader import CountySubdivision, ZoneRecord, detect_family
from alertstation.zones.service import load_files
from tests.fuzz.fuzzing import fuzz, mutated
from tests.zones.zonefiles import LAND, MARINE, PARTIAL, PUBLIC_FIELDS, public_row, write_dbf

RECORDS_KEPT = 6
FILE_NAMES = {"public": "z_18mr25.dbf", "marine": "mz20fe25.dbf", "partial": "cs16ap26.dbf"}


def _head_of(path: Path, records: int = RECORDS_KEPT) -> bytes:
    """The file's real header and its first ``records`` records, the count patched to match."""
    data = path.read_bytes()
    header_length, record_length = struct.unpack_from("<HH", data, 8)
    image = bytearray(data[: header_length + records * record_length]) + b"\x1a"
    struct.pack_into("<I", image, 4, records)
    return bytes(image)


def _made_up() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        rows = [public_row("OK", "017", "Canadian", LON=-97.98, LAT=35.54)]
        rows.append(public_row("TX", "5", "Somewhere \xe9", CWA="FWD", SHORTNAME="S"))
        return write_dbf(Path(folder) / "z.dbf", PUBLIC_FIELDS, rows).read_bytes()


SAMPLES: dict[str, bytes] = {"public-made-up": _made_up()}
for family, source in (("public", LAND), ("marine", MARINE), ("partial", PARTIAL)):
    if source.exists():
        SAMPLES[family] = _head_of(source)


def _load(family: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / FILE_NAMES[family]
        path.write_bytes(data)
        try:
            loaded = load_files({family: path})
        except ValueError as ex:
            assert str(ex)
        else:
            records = loaded[family]
            kind = CountySubdivision if family == "partial" else ZoneRecord
            assert all(isinstance(record, kind) for record in records)
        try:
            assert detect_family(path) in ("public", "marine", "fire", "partial")
        except ValueError as ex:
            assert str(ex)


@pytest.mark.parametrize("sample", sorted(SAMPLES))
@fuzz(50)
@given(data=st.data())
def test_mutated_tables_load_or_fail_with_value_error(sample: str, data: st.DataObject) -> None:
    original = SAMPLES[sample]
    family = sample.split("-")[0]
    header_length = struct.unpack_from("<H", original, 8)[0]
    where = data.draw(st.sampled_from(["records", "anywhere"]))
    protect = header_length if where == "records" else 0
    _load(family, data.draw(mutated(original, protect=protect, most=3)))


@fuzz(40)
@given(data=st.binary(max_size=300), family=st.sampled_from(sorted(FILE_NAMES)))
def test_random_bytes_fail_with_value_error(data: bytes, family: str) -> None:
    _load(family, data)


FIELD_TYPES = st.sampled_from([bytes([t]) for t in b"CNFLDMBGPIYTO@+0V\x00 Q"])


@fuzz(40)
@given(
    data=st.data(),
    sample=st.sampled_from(sorted(SAMPLES)),
    kind=FIELD_TYPES,
    width=st.sampled_from([None, 0, 1, 8, 255]),
)
@example(data=None, sample="public-made-up", kind=b"M", width=None)  # was dbfread's OSError
@example(data=None, sample="public-made-up", kind=b"P", width=None)
def test_any_field_type_and_width_loads_or_fails_with_value_error(
    data: st.DataObject | None, sample: str, kind: bytes, width: int | None
) -> None:
    image = bytearray(SAMPLES[sample])
    header_length = struct.unpack_from("<H", image, 8)[0]
    fields = (header_length - 33) // 32
    field = data.draw(st.integers(0, fields - 1)) if data is not None else 0
    image[32 + 32 * field + 11] = kind[0]
    if width is not None:
        image[32 + 32 * field + 16] = width
    _load(sample.split("-")[0], bytes(image))
