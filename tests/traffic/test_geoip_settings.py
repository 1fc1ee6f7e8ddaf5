"""The GeoIP path settings are where lookups read the databases, and an upload points them at
the file it installed (both backends: the settings live in the database)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select

from alertstation.audit.tables import audit_logs as audit_log
from alertstation.security.geoip.lookup import close_locators, slot_path
from tests.security.test_geoip_files import asn_db, city_db, country_db
from tests.security.test_geoip_routes import upload
from tests.support import SignedIn
from tests.support import StationHarness as Station

Rows = Callable[[], list[dict[str, Any]]]


@pytest.fixture(autouse=True)
def _close_readers() -> Iterator[None]:
    yield
    close_locators()


def _settings(admin: SignedIn, **changes: Any) -> dict[str, Any]:
    answer = admin.request("PUT", "/api/traffic/settings", json=changes)
    assert answer.status_code == 200, answer.text
    return answer.json["settings"]


def test_lookups_read_the_databases_the_settings_name(
    station: Station, admin: SignedIn, logged: Rows, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "var-lib-geoip"
    city, asn = city_db(elsewhere), asn_db(elsewhere)
    _settings(admin, geoip_database_path=str(city), geoip_asn_database_path=str(asn))
    data_dir = station.app.station.settings.data_dir
    assert not slot_path(data_dir, "location").exists(), "nothing under the data directory"

    station.client.simulate_get("/login", remote_addr="8.8.8.8")
    (row,) = logged()
    assert (row["country_code"], row["city"], row["asn_org"]) == ("US", "Mountain View", "Google")

    answer = admin.request("GET", "/api/traffic/geoip").json
    assert answer["paths"] == {"location": str(city), "asn": str(asn)}
    listing = answer["databases"]
    assert listing["location"]["path"] == str(city) and listing["location"]["type"] == "City"
    assert listing["asn"]["path"] == str(asn)

    # Another setting, another database: the next lookup reads it.
    country = country_db(tmp_path / "other")
    _settings(admin, geoip_database_path=str(country))
    station.client.simulate_get("/login", remote_addr="8.8.8.8")
    latest = logged()[-1]
    assert (latest["country_code"], latest["city"]) == ("US", None)


def test_an_upload_points_the_setting_at_the_installed_file(
    station: Station, engine: Engine, admin: SignedIn, logged: Rows, tmp_path: Path
) -> None:
    stale = country_db(tmp_path / "old")
    _settings(admin, geoip_database_path=str(stale))
    result = upload(admin, city_db(tmp_path / "new").read_bytes())
    assert result.status_code == 201, result.text
    installed = slot_path(station.app.station.settings.data_dir, "location")
    current = admin.request("GET", "/api/traffic/settings").json["settings"]
    assert current["geoip_database_path"] == str(installed)
    assert current["geoip_asn_database_path"] is None

    station.client.simulate_get("/login", remote_addr="8.8.8.8")
    assert logged()[-1]["city"] == "Mountain View", "the uploaded City database is read"

    with engine.connect() as conn:
        details = conn.execute(
            select(audit_log.c.details)
            .where(audit_log.c.action == "config.updated", audit_log.c.target == "geoip")
            .order_by(audit_log.c.id)
        ).scalar_one()
    assert orjson.loads(details)["fields"] == ["geoip_database_path", "location_database"]
