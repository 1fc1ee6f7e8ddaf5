"""Zone administration over HTTP: upload, reload, info, search, picker and validation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import Engine, select

from alertstation.app import create_app
from alertstation.audit.tables import audit_logs
from tests.support import SignedIn, StationHarness, make_settings
from tests.zones.zonefiles import (
    LAND,
    LAND_CODES,
    LAND_RECORDS,
    MARINE,
    MARINE_RECORDS,
    require_shared_data,
    write_dbf,
)

BOUNDARY = "alertstation-test-boundary"


def multipart(name: str, data: bytes, field: str = "file") -> tuple[bytes, dict[str, str]]:
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; '
            f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    return body, {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


def upload(browser: SignedIn, name: str, data: bytes) -> Any:
    body, headers = multipart(name, data)
    return browser.request("POST", "/admin/zones/upload", body=body, headers=headers)


@pytest.fixture
def admin(station: StationHarness) -> SignedIn:
    require_shared_data()
    station.add_user("boss", "admin")
    return station.sign_in("boss")


def assets_of(station: StationHarness) -> Path:
    return station.app.station.settings.assets_dir


def test_upload_land_then_marine_and_look_zones_up(
    station: StationHarness, admin: SignedIn
) -> None:
    result = upload(admin, "z_18mr25.dbf", LAND.read_bytes())
    assert result.status_code == 201, result.text
    assert result.json["family"] == "public"
    assert result.json["records"] == {"public": LAND_RECORDS}
    assert (assets_of(station) / "z_18mr25.dbf").read_bytes() == LAND.read_bytes()
    result = upload(admin, "mz20fe25.dbf", MARINE.read_bytes())
    assert result.status_code == 201 and result.json["counts"] == {"marine": MARINE_RECORDS}

    info = admin.request("GET", "/admin/zones/info").json
    families = {f["family"]: f for f in info["families"]}
    assert families["public"]["dbf_records"] == LAND_RECORDS
    assert families["public"]["database_rows"] == LAND_CODES
    assert families["marine"]["database_rows"] == MARINE_RECORDS
    assert families["public"]["file_size"] == LAND.stat().st_size
    assert families["public"]["active_path"].endswith("z_18mr25.dbf")
    assert info["cache_size"] == LAND_CODES + MARINE_RECORDS

    found = admin.request("GET", "/api/zones", params={"q": "PHZ1", "type": "marine"}).json
    assert found["total"] > 0 and all(z["zone_code"].startswith("PHZ1") for z in found["zones"])
    by_name = admin.request("GET", "/api/zones", params={"q": "king george"}).json
    assert [z["zone_code"] for z in by_name["zones"]] == ["VAZ057"]

    picker = admin.request("GET", "/api/zones/picker", params={"family": "marine"}).json
    keys = [group["key"] for group in picker["groups"]]
    assert "GM" in keys and "PH" in keys
    assert all(z["code"].startswith(g["key"]) for g in picker["groups"] for z in g["zones"])
    land = admin.request("GET", "/api/zones/picker", params={"family": "land"}).json
    assert sum(len(g["zones"]) for g in land["groups"]) == LAND_CODES

    checked = admin.request(
        "GET", "/api/zones/validate", params={"codes": "vaz-057, PHZ113 txz999 nonsense"}
    ).json
    assert checked["valid"] == ["VAZ057", "PHZ113", "TXZ999"]
    assert checked["invalid"] == ["NONSENSE"] or checked["invalid"] == ["nonsense"]
    assert checked["known"][0] == {"code": "VAZ057", "name": "King George"}
    assert checked["unknown"] == ["TXZ999"]

    with station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.target, audit_logs.c.username).where(
                audit_logs.c.action == "config.updated"
            )
        ).all()
    assert rows == [("zone_catalog", "boss"), ("zone_catalog", "boss")]


def test_bad_uploads_change_nothing(
    station: StationHarness, admin: SignedIn, tmp_path: Path
) -> None:
    assert upload(admin, "z_18mr25.dbf", LAND.read_bytes()).status_code == 201
    before = admin.request("GET", "/admin/zones/info").json["families"]
    foreign = write_dbf(tmp_path / "foreign.dbf", [("COLOR", "C", 8, 0)], [{"COLOR": "red"}])
    cases = [
        ("z_01ja26.dbf", foreign.read_bytes(), "Unrecognised zone DBF schema"),
        ("z_01ja26.dbf", LAND.read_bytes()[:50_000], "truncated"),
        ("../z_01ja26.dbf", LAND.read_bytes(), None),
        ("z_01ja26.txt", LAND.read_bytes(), ".dbf"),
        ("z_01ja26.dbf", b"", "empty"),
    ]
    for name, data, message in cases:
        result = upload(admin, name, data)
        if name.startswith(".."):
            assert result.status_code in (201, 422)
            continue
        assert result.status_code == 422, (name, result.text)
        if message:
            assert message in result.json["error"]["message"], result.json
    names = sorted(p.name for p in assets_of(station).iterdir())
    assert "z_01ja26.txt" not in names and not any(n.startswith(".upload") for n in names)
    assert (
        admin.request("GET", "/admin/zones/info").json["families"][0]["database_rows"]
        == (before[0]["database_rows"])
    )


def test_traversal_name_is_reduced_to_its_base_name(
    station: StationHarness, admin: SignedIn
) -> None:
    result = upload(admin, "../../etc/z_02ja26.dbf", LAND.read_bytes())
    assert result.status_code == 201
    assert result.json["saved"] == "z_02ja26.dbf"
    assert (assets_of(station) / "z_02ja26.dbf").is_file()


def test_reload_syncs_what_the_resolver_picks(station: StationHarness, admin: SignedIn) -> None:
    empty = admin.request("POST", "/admin/zones/reload")
    assert empty.status_code == 503 and empty.json["error"]["code"] == "no_zone_files"
    assets = assets_of(station)
    assets.mkdir(parents=True, exist_ok=True)
    (assets / "z_18mr25.dbf").write_bytes(LAND.read_bytes())
    write_dbf(
        assets / "z_05de24.dbf",
        [("STATE", "C", 2, 0), ("ZONE", "C", 3, 0), ("NAME", "C", 20, 0)],
        [{"STATE": "XX", "ZONE": "001", "NAME": "Older"}],
    )
    result = admin.request("POST", "/admin/zones/reload")
    assert result.status_code == 200, result.text
    assert result.json["files"] == {"public": "z_18mr25.dbf"}
    assert admin.request("GET", "/api/zones", params={"q": "XXZ001"}).json["total"] == 0


def test_viewer_may_look_but_not_change(station: StationHarness) -> None:
    require_shared_data()
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/admin/zones/info").status_code == 200
    assert viewer.request("GET", "/admin/zones").status_code == 200
    assert upload(viewer, "z_18mr25.dbf", LAND.read_bytes()).status_code == 403
    assert viewer.request("POST", "/admin/zones/reload").status_code == 403


def test_an_upload_through_one_worker_is_seen_by_another(
    station: StationHarness, admin: SignedIn, tmp_path: Path, engine: Engine
) -> None:
    other_settings = make_settings(
        tmp_path / "other",
        engine.url.render_as_string(hide_password=False),
        secret_key=station.app.station.settings.secret_key,
    )
    other = falcon.testing.TestClient(
        create_app(other_settings, engine=engine, clock=station.clock)
    )
    cookies = {"alertstation_session": admin.cookie}
    assert (
        other.simulate_get("/api/zones", params={"q": "VAZ057"}, cookies=cookies).json["total"] == 0
    )
    assert upload(admin, "z_18mr25.dbf", LAND.read_bytes()).status_code == 201
    deadline = time.monotonic() + 10
    seen = 0
    while time.monotonic() < deadline and not seen:
        seen = other.simulate_get("/api/zones", params={"q": "VAZ057"}, cookies=cookies).json[
            "total"
        ]
        time.sleep(0.1)
    assert seen == 1
