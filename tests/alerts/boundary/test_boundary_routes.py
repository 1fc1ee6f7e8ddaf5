"""The boundary page and API: upload, preview, match_polygons, clear, recalculate; audited."""

from __future__ import annotations

import json
from typing import Any

import orjson
from sqlalchemy import Engine, select

from alertstation.audit.tables import audit_logs
from tests.support import SignedIn, StationHarness

FENCE = "alertstation-test-fence"
SQUARE = {
    "type": "Feature",
    "properties": {"name": "secret-looking-property"},
    "geometry": {
        "type": "Polygon",
        "coordinates": [
            [[-98.0, 35.0], [-97.0, 35.0], [-97.0, 36.0], [-98.0, 36.0], [-98.0, 35.0]]
        ],
    },
}


def upload(user: SignedIn, name: str, data: bytes) -> Any:
    body = (
        (
            f'--{FENCE}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: application/geo+json\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{FENCE}--\r\n".encode()
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={FENCE}"}
    return user.request("POST", "/api/boundary", body=body, headers=headers)


def boundary_audit(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.action, audit_logs.c.target, audit_logs.c.details).where(
                audit_logs.c.action == "config.updated"
            )
        ).all()
    return [{"target": row.target, **json.loads(row.details)} for row in rows]


def test_boundary_needs_system_configure(station: StationHarness) -> None:
    assert station.client.simulate_get("/admin/boundary").status_code == 401
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/admin/boundary").status_code == 403
    assert upload(viewer, "x.geojson", orjson.dumps(SQUARE)).status_code == 403


def test_upload_preview_toggle_and_clear_are_audited_by_name(
    station: StationHarness, engine: Engine
) -> None:
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    empty = admin.request("GET", "/admin/boundary")
    assert empty.status_code == 200 and 'id="boundary-empty"' in empty.text

    saved = upload(admin, "Oklahoma City.geojson", orjson.dumps(SQUARE))
    assert saved.status_code == 201, saved.text
    assert saved.json["name"] == "Oklahoma City"
    assert saved.json["recalculated"]["alerts"] == 0
    page = admin.request("GET", "/admin/boundary").text
    assert '<dd id="boundary-name">Oklahoma City</dd>' in page
    assert 'class="map-boundary"' in page
    preview = admin.request("GET", "/admin/boundary/preview.svg")
    assert preview.headers["content-type"].startswith("image/svg+xml")
    assert preview.text.startswith("<svg") and 'class="map-boundary"' in preview.text
    described = admin.request("GET", "/api/boundary").json
    assert described["boundary"]["bounds"] == [-98.0, 35.0, -97.0, 36.0]
    assert described["match_polygons"] is False

    toggled = admin.request("PUT", "/api/boundary", json={"match_polygons": True})
    assert toggled.json == {"match_polygons": True, "changed": ["match_polygons"]}
    assert admin.request("GET", "/api/boundary").json["match_polygons"] is True
    cleared = admin.request("DELETE", "/api/boundary")
    assert cleared.json["cleared"] is True
    assert admin.request("DELETE", "/api/boundary").json["cleared"] is False
    assert admin.request("GET", "/api/boundary").json["boundary"] is None

    audits = boundary_audit(engine)
    assert [(row["target"], row["fields"]) for row in audits] == [
        ("boundary", ["boundary"]),
        ("boundary", ["match_polygons"]),
        ("boundary", ["boundary"]),
    ], audits
    assert all("secret-looking-property" not in json.dumps(row) for row in audits)
    assert all("-98.0" not in json.dumps(row) for row in audits)


def test_bad_uploads_change_nothing(station: StationHarness, engine: Engine) -> None:
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    point = orjson.dumps({"type": "Point", "coordinates": [1, 2]})
    for data, status in ((b"{not json", 422), (point, 422)):
        result = upload(admin, "bad.geojson", data)
        assert result.status_code == status, result.text
        assert result.json["error"]["code"] == "invalid_boundary"
    not_multipart = admin.request("POST", "/api/boundary", json=SQUARE)
    assert not_multipart.status_code == 415
    bad_setting = admin.request("PUT", "/api/boundary", json={"match_polygons": "yes"})
    assert bad_setting.status_code == 422
    assert admin.request("GET", "/api/boundary").json["boundary"] is None
    assert boundary_audit(engine) == []
    recalculated = admin.request("POST", "/api/boundary/recalculate")
    assert recalculated.status_code == 200 and recalculated.json["geometry_matches"] == 0
