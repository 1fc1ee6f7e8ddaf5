"""GeoLocator and the metadata reader, on real MaxMind DB files."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import geoip2.database
import pytest

from alertstation.security.geoip.lookup import (
    ASN,
    LOCATION,
    GeoLocator,
    NotMaxMindDatabase,
    close_locators,
    database_kind,
    installed,
    locator_for,
    lookup_address,
    read_metadata,
    slot_path,
)
from tests.security.test_geoip_files import BUILD_EPOCH_MIN, asn_db, city_db, country_db


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    yield folder
    close_locators()


def install(source: Path, data_dir: Path, slot: str) -> Path:
    target = slot_path(data_dir, slot)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def test_metadata_decoder_agrees_with_the_reader(tmp_path: Path) -> None:
    for path, expected in ((city_db(tmp_path), "City"), (asn_db(tmp_path), "ASN")):
        metadata = read_metadata(path)
        with geoip2.database.Reader(str(path)) as reader:
            real = reader.metadata()
        assert metadata["database_type"] == real.database_type
        assert metadata["build_epoch"] == real.build_epoch >= BUILD_EPOCH_MIN
        assert metadata["ip_version"] == 6 and metadata["languages"] == ["en"]
        assert metadata["description"] == {"en": "alertstation test database"}
        assert database_kind(metadata["database_type"]) == expected


def test_metadata_reader_refuses_other_files(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"hello" * 100)
    with pytest.raises(NotMaxMindDatabase, match="marker"):
        read_metadata(text)
    with pytest.raises(NotMaxMindDatabase, match="unsupported database type"):
        database_kind("GeoIP2-Anonymous-IP")


def test_locate_v4_and_v6_and_asn(data_dir: Path, tmp_path: Path) -> None:
    locator = locator_for(data_dir)
    assert locator.locate("8.8.8.8") is None, "no database installed"
    install(city_db(tmp_path), data_dir, LOCATION)
    install(asn_db(tmp_path), data_dir, ASN)
    assert locator.locate("8.8.8.8") == {
        "flag": "US",
        "country": "United States",
        "region": "California",
        "region_code": "CA",
        "city": "Mountain View",
    }
    assert locator.locate("2001:4860::8888") == {
        "flag": "US",
        "country": "United States",
        "region": "Ohio",
        "region_code": "OH",
        "city": "Cleveland",
    }
    assert locator.locate("::ffff:81.2.69.160")["city"] == "London"  # type: ignore[index]
    assert locator.locate("9.9.9.9") is None, "not in the database"
    assert locator.asn("8.8.4.4") is None
    assert locator.asn("8.8.8.8") == {"asn": 15169, "org": "Google"}
    assert locator.asn("2001:4860::1") == {"asn": 15169, "org": "Google"}
    assert locator_for(data_dir) is locator


@pytest.mark.parametrize(
    "value",
    ["8.8.8.0/24", "2001:4860::/32", "127.0.0.1", "::1", "10.1.2.3", "192.168.1.1",
     "fe80::1", "169.254.1.1", "0.0.0.0", "not an address", ""],
)  # fmt: skip
def test_ranges_and_local_addresses_have_no_location(
    data_dir: Path, tmp_path: Path, value: str
) -> None:
    install(city_db(tmp_path), data_dir, LOCATION)
    assert lookup_address(value) is None
    assert locator_for(data_dir).locate(value) is None


def test_country_database_fills_the_location_slot(data_dir: Path, tmp_path: Path) -> None:
    install(country_db(tmp_path), data_dir, LOCATION)
    assert locator_for(data_dir).locate("8.8.8.8") == {
        "flag": "US",
        "country": "United States",
        "region": None,
        "region_code": None,
        "city": None,
    }
    assert installed(data_dir)[LOCATION].type == "Country"  # type: ignore[union-attr]


def test_reader_reopens_when_the_file_changes_and_closes(data_dir: Path, tmp_path: Path) -> None:
    locator = GeoLocator(data_dir)
    target = install(country_db(tmp_path), data_dir, LOCATION)
    assert locator.locate("81.2.69.160") is None
    staged = city_db(tmp_path)
    os.replace(staged, target)
    assert locator.locate("81.2.69.160")["city"] == "London"  # type: ignore[index]
    target.unlink()
    assert locator.locate("81.2.69.160") is None, "a removed database stops lookups"
    install(city_db(tmp_path), data_dir, LOCATION)
    assert locator.locate("8.8.8.8") is not None
    locator.close()
    locator.close()


def test_without_the_reader_package_lookups_answer_none(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(city_db(tmp_path), data_dir, LOCATION)
    monkeypatch.setitem(sys.modules, "geoip2.database", None)
    assert locator_for(data_dir).locate("8.8.8.8") is None
    assert installed(data_dir)[LOCATION].type == "City"  # type: ignore[union-attr]
