"""GeoIP uploads over HTTP, the installed-database listing, and locations on the ban list."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from alertstation.security.geoip.lookup import MARKER, close_locators, slot_path
from tests.security.conftest import ADMIN_IP
from tests.security.test_geoip_files import asn_db, city_db, country_db
from tests.support import SignedIn
from tests.support import StationHarness as Station

Rows = Callable[[], list[dict[str, Any]]]
UPLOAD = "/api/traffic/geoip/upload"
BOUNDARY = "alertstation-geoip-boundary"


@pytest.fixture(autouse=True)
def _close_readers() -> Iterator[None]:
    yield
    close_locators()


def upload(who: SignedIn, data: bytes, name: str = "db.mmdb") -> Any:
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    return who.request("POST", UPLOAD, body=body, headers=headers, remote_addr=ADMIN_IP)


def data_dir(station: Station) -> Path:
    return station.app.station.settings.data_dir


def test_upload_city_then_asn_list_and_audit(
    station: Station, admin: SignedIn, tmp_path: Path, audit_rows: Rows
) -> None:
    city = city_db(tmp_path / "src").read_bytes()
    result = upload(admin, city)
    assert result.status_code == 201, result.text
    assert result.json["type"] == "City" and result.json["slot"] == "location"
    assert result.json["validated_with_reader"] is True and "note" not in result.json
    assert result.json["database"]["database_type"] == "GeoIP2-City"
    assert slot_path(data_dir(station), "location").read_bytes() == city
    assert not slot_path(data_dir(station), "asn").exists()

    asn = asn_db(tmp_path / "src").read_bytes()
    result = upload(admin, asn)
    assert result.status_code == 201, result.text
    assert result.json["type"] == "ASN" and result.json["slot"] == "asn"
    assert slot_path(data_dir(station), "asn").read_bytes() == asn
    assert slot_path(data_dir(station), "location").read_bytes() == city

    listing = admin.request("GET", "/api/traffic/geoip").json
    assert listing["reader_available"] is True
    location, asn_info = listing["databases"]["location"], listing["databases"]["asn"]
    assert location["type"] == "City" and location["size"] == len(city)
    assert location["file"] == "location.mmdb" and location["build_date"].endswith("Z")
    assert asn_info["type"] == "ASN" and asn_info["database_type"] == "GeoLite2-ASN"
    assert sorted(p.name for p in slot_path(data_dir(station), "asn").parent.iterdir()) == [
        "asn.mmdb",
        "location.mmdb",
    ], "no staging folder is left behind"

    rows = [row for row in audit_rows() if row["action"] == "config.updated"]
    assert [(row["target"], orjson.loads(row["details"])) for row in rows] == [
        ("geoip", {"fields": ["geoip_database_path", "location_database"]}),
        ("geoip", {"fields": ["asn_database", "geoip_asn_database_path"]}),
    ]
    assert all(row["client_ip"] == ADMIN_IP for row in rows)


def test_country_database_replaces_city_in_the_location_slot(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    assert upload(admin, city_db(tmp_path).read_bytes()).status_code == 201
    country = country_db(tmp_path).read_bytes()
    result = upload(admin, country)
    assert result.status_code == 201 and result.json["type"] == "Country"
    assert result.json["slot"] == "location"
    assert slot_path(data_dir(station), "location").read_bytes() == country


@pytest.mark.parametrize("kind", ["text", "truncated", "empty", "nested"])
def test_bad_files_are_refused_and_replace_nothing(
    station: Station, admin: SignedIn, tmp_path: Path, kind: str, audit_rows: Rows
) -> None:
    city = city_db(tmp_path).read_bytes()
    assert upload(admin, city).status_code == 201
    data = {
        "text": b"not a database\n" * 1000,
        "truncated": city[: len(city) // 2],
        "empty": b"",
        # metadata of arrays in arrays, 5000 deep (each: extended type, array of one)
        "nested": b"\x00" * 64 + MARKER + b"\x01\x04" * 5000 + b"\x40",
    }[kind]
    result = upload(admin, data)
    assert result.status_code == 422, result.text
    error = result.json["error"]
    assert error["code"] == "invalid_geoip_database" and error["details"]["field"] == "file"
    assert slot_path(data_dir(station), "location").read_bytes() == city
    assert len([row for row in audit_rows() if row["action"] == "config.updated"]) == 1


def test_upload_without_the_reader_package_is_accepted_with_a_note(
    station: Station, admin: SignedIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "geoip2.database", None)
    city = city_db(tmp_path).read_bytes()
    result = upload(admin, city)
    assert result.status_code == 201, result.text
    assert result.json["note"] == "accepted; install geoip2 for lookups to resolve"
    assert result.json["validated_with_reader"] is False and result.json["type"] == "City"
    assert slot_path(data_dir(station), "location").read_bytes() == city
    assert admin.request("GET", "/api/traffic/geoip").json["reader_available"] is False
    assert upload(admin, b"plain text, no marker").status_code == 422


def test_viewer_may_list_but_not_upload(station: Station, tmp_path: Path) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher", remote_addr=ADMIN_IP)
    assert upload(viewer, city_db(tmp_path).read_bytes()).status_code == 403
    assert not slot_path(data_dir(station), "location").exists()
    listing = viewer.request("GET", "/api/traffic/geoip")
    assert listing.status_code == 200
    assert listing.json["databases"] == {"location": None, "asn": None}


def test_ban_list_shows_locations_only_for_public_single_addresses(
    station: Station, admin: SignedIn, tmp_path: Path
) -> None:
    for value in ("8.8.8.8", "8.8.8.0/24", "127.0.0.1", "2001:4860::8888"):
        added = admin.request(
            "POST", "/security/ip-filters", json={"value": value}, remote_addr=ADMIN_IP
        )
        assert added.status_code == 201, added.text

    def listed() -> dict[str, dict[str, Any]]:
        result = admin.request("GET", "/security/ip-filters", remote_addr=ADMIN_IP)
        return {entry["value"]: entry for entry in result.json["filters"]}

    assert all("location" not in entry for entry in listed().values()), "no database yet"
    assert upload(admin, city_db(tmp_path).read_bytes()).status_code == 201
    entries = listed()
    assert entries["8.8.8.8"]["location"] == {
        "flag": "US",
        "country": "United States",
        "region": "California",
        "region_code": "CA",
        "city": "Mountain View",
    }
    assert entries["2001:4860::8888"]["location"]["city"] == "Cleveland"
    assert "location" not in entries["8.8.8.0/24"]
    assert "location" not in entries["127.0.0.1"]
