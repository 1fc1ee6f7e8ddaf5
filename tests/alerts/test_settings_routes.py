"""Alert location and filtering settings over HTTP: validation, warnings, audit and re-match."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import AlertSettings, get_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.audit.tables import audit_logs
from alertstation.db import bump_generation, read_generation
from alertstation.db.engine import begin_write
from alertstation.zones.tables import wx_zones
from tests.support import SignedIn
from tests.support import StationHarness as Station

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
LOCATION = "/admin/location_settings"
FILTERING = "/admin/alert_filtering"


def settings_of(station: Station) -> AlertSettings:
    with station.engine.connect() as conn:
        return get_alert_settings(conn)


def config_rows(station: Station) -> list[tuple[str, list[str], str]]:
    query = (
        select(audit_logs.c.target, audit_logs.c.details, audit_logs.c.username)
        .where(audit_logs.c.action == "config.updated")
        .order_by(audit_logs.c.id)
    )
    with station.engine.connect() as conn:
        rows = conn.execute(query).all()
    return [
        (row.target, json.loads(row.details)["fields"], row.username)
        for row in rows
        if row.target in ("location_settings", "alert_filtering")
    ]


def add_zone(station: Station, code: str, name: str) -> None:
    """Put one land zone in the catalog table and make the app's in-memory copy follow."""
    with begin_write(station.engine) as conn:
        conn.execute(
            wx_zones.insert().values(
                zone_code=code,
                zone_type="public",
                state_code=code[:2],
                zone_number=code[3:],
                cwa="LWX",
                time_zone="E",
                fe_area="",
                name=name,
                state_zone=code[:2] + code[3:],
                short_name=name,
            )
        )
        bump_generation(conn, "zones")
    station.app.station.zones.clear()


def operator(station: Station) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def test_location_saves_codes_and_reports_unknown_as_warnings(station: Station) -> None:
    add_zone(station, "VAZ057", "King George")
    ops = operator(station)
    result = ops.request("POST", LOCATION, json={"zone_codes": "vaz057, VA099 051099\nVAZ057"})
    assert result.status_code == 200, result.text
    assert result.json["saved"] == {"zone_codes": ["VAZ057", "VAZ099", "051099"]}
    assert result.json["warnings"] == {"unknown": ["VAZ099"]}
    assert result.json["changed"] == ["zone_codes"]
    assert result.json["rematched"] == 0
    assert settings_of(station).zone_codes == ("VAZ057", "VAZ099", "051099")
    assert config_rows(station) == [("location_settings", ["zone_codes"], "ops")]

    # The page shows the saved codes; a list in JSON works too and an unchanged save
    # is still audited, with no field names.
    page = ops.request("GET", LOCATION, headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert "VAZ057, VAZ099, 051099" in page.text
    again = ops.request("POST", LOCATION, json={"zone_codes": ["VAZ057", "VAZ099", "051099"]})
    assert again.json["changed"] == []
    assert config_rows(station)[-1] == ("location_settings", [], "ops")


@pytest.mark.parametrize(
    ("path", "body", "invalid"),
    [
        (LOCATION, {"zone_codes": "VAZ057, 12345, nonsense"}, ["12345", "nonsense"]),
        (LOCATION, {"zone_codes": "OKX109, 40109"}, ["OKX109", "40109"]),
        (FILTERING, {"storage_zone_codes": "VAZ05X"}, ["VAZ05X"]),
        (FILTERING, {"forward_events": ["TOR", "TORN", "xyz"]}, ["TORN", "XYZ"]),
        (FILTERING, {"storage_zone_codes": "040000", "forward_events": ["ZZZ"]}, ["ZZZ"]),
    ],
)
def test_invalid_tokens_are_422_and_change_nothing(
    station: Station, path: str, body: dict[str, object], invalid: list[str]
) -> None:
    ops = operator(station)
    result = ops.request("POST", path, json=body)
    assert result.status_code == 422, result.text
    assert result.json["error"]["code"] == "invalid"
    assert result.json["error"]["details"]["invalid"] == invalid
    for token in invalid:
        assert token in result.json["error"]["message"]
    assert settings_of(station) == AlertSettings()
    assert config_rows(station) == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (LOCATION, {}),
        (LOCATION, {"zone_codes": 57}),
        (LOCATION, {"zone_codes": ["VAZ057", 3]}),
        (FILTERING, {}),
        (FILTERING, {"forward_events": "TOR" * 30_000}),
    ],
)
def test_bad_shapes_are_422(station: Station, path: str, body: dict[str, object]) -> None:
    ops = operator(station)
    result = ops.request("POST", path, json=body)
    assert result.status_code == 422, result.text
    assert settings_of(station) == AlertSettings()
    assert config_rows(station) == []


def test_filtering_saves_storage_codes_and_events(station: Station) -> None:
    ops = operator(station)
    result = ops.request(
        "POST",
        FILTERING,
        json={"storage_zone_codes": ["040000", "TXZ999"], "forward_events": ["svr", "TOR", "RWT"]},
    )
    assert result.status_code == 200, result.text
    assert result.json["saved"] == {
        "storage_zone_codes": ["040000", "TXZ999"],
        "forward_events": ["RWT", "SVR", "TOR"],  # in the order of the SAME event table
    }
    assert result.json["warnings"] == {"unknown": ["TXZ999"]}
    assert settings_of(station) == AlertSettings((), ("040000", "TXZ999"), ("RWT", "SVR", "TOR"))
    # Only the events changed: the audit row names that field alone.
    only_events = ops.request("POST", FILTERING, json={"forward_events": ["TOR"]})
    assert only_events.json["changed"] == ["forward_events"]
    assert settings_of(station).storage_zone_codes == ("040000", "TXZ999")
    assert config_rows(station) == [
        ("alert_filtering", ["forward_events", "storage_zone_codes"], "ops"),
        ("alert_filtering", ["forward_events"], "ops"),
    ]
    with station.engine.connect() as conn:
        details = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.target == "alert_filtering")
            .order_by(audit_logs.c.id)
        ).scalars()
        last = json.loads(list(details)[-1])
    # The codes that came and went, not both whole lists.
    assert last["changes"] == {"forward_events": {"added": [], "removed": ["RWT", "SVR"]}}


def test_saving_codes_rematches_the_store(station: Station) -> None:
    data = (FIXTURES / "cap12_svr_new.xml").read_bytes()
    (stored,) = import_messages(station.engine, data, "cap12_svr_new.xml")
    with station.engine.connect() as conn:
        before = read_generation(conn, "alerts")
    ops = operator(station)
    result = ops.request("POST", LOCATION, json={"zone_codes": ["040109"]})
    assert result.status_code == 200, result.text
    assert result.json["rematched"] == 1
    storage = ops.request("POST", FILTERING, json={"storage_zone_codes": ["040017"]})
    assert storage.json["rematched"] == 0  # already stored as part of the broadcast area
    with station.engine.connect() as conn:
        row = conn.execute(select(cap_alerts.c.in_area, cap_alerts.c.stored_area)).one()
        assert (row.in_area, row.stored_area) == (True, True)
        assert read_generation(conn, "alerts") == before + 1
    moved = ops.request("POST", LOCATION, json={"zone_codes": ["VAZ057"]})
    assert moved.json["rematched"] == 1
    with station.engine.connect() as conn:
        row = conn.execute(select(cap_alerts.c.in_area, cap_alerts.c.stored_area)).one()
        assert (row.in_area, row.stored_area) == (False, True)


def test_viewer_sees_pages_read_only_and_cannot_save(station: Station) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    html = {"Accept": "text/html"}
    for path in (LOCATION, FILTERING):
        page = viewer.request("GET", path, headers=html)
        assert page.status_code == 200
        assert 'id="alert-settings-save" disabled' in page.text
        assert "alert-settings-readonly" in page.text
        assert "<script>" not in page.text and "style=" not in page.text
        refused = viewer.request("POST", path, json={"zone_codes": ["VAZ057"]})
        assert refused.status_code == 403
        assert refused.json["error"]["code"] == "forbidden"
    assert settings_of(station) == AlertSettings()
    assert config_rows(station) == []


def test_filtering_page_groups_events(station: Station) -> None:
    ops = operator(station)
    ops.request("POST", FILTERING, json={"forward_events": ["TOR"]})
    page = ops.request("GET", FILTERING, headers={"Accept": "text/html"}).text
    assert 'href="/admin/location_settings" aria-current="page"' not in page
    assert "/static/js/zone-picker.js" in page and "/static/css/zones.css" in page
    assert '<div class="zone-picker" data-target="#storage-zone-codes" data-check="area"' in page
    for group in ("warnings", "watches", "tests", "other"):
        assert f'data-group="{group}"' in page
    warnings = page.split('data-group="warnings"')[1].split("</fieldset>")[0]
    assert 'value="TOR" checked>' in warnings and "Tornado Warning" in warnings
    assert 'value="TOA"' not in warnings
    tests = page.split('data-group="tests"')[1].split("</fieldset>")[0]
    assert 'value="RWT"' in tests and "Required Weekly Test" in tests


def test_form_posts_redirect_with_status_or_show_errors(station: Station) -> None:
    ops = operator(station)
    form = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "text/html"}
    saved = ops.request(
        "POST",
        LOCATION,
        csrf=False,
        headers=form,
        body=f"csrf_token={ops.csrf}&zone_codes=VAZ057%2C+051099",
    )
    assert saved.status_code == 303
    target = urlsplit(saved.headers["location"])
    assert target.path == LOCATION
    assert parse_qs(target.query) == {"saved": ["zone_codes"], "unknown": ["VAZ057"]}
    shown = ops.request("GET", f"{LOCATION}?{target.query}", headers={"Accept": "text/html"})
    assert "Saved (zone_codes changed)." in shown.text
    assert "Not in the zone catalog (kept): VAZ057." in shown.text

    refused = ops.request(
        "POST", LOCATION, csrf=False, headers=form,
        body=f"csrf_token={ops.csrf}&zone_codes=VAZ057+bogus",
    )  # fmt: skip
    assert refused.status_code == 422
    assert "bogus" in refused.text and "VAZ057 bogus" in refused.text
    # Beside the field, in words, the field marked invalid and described by the message.
    assert 'aria-invalid="true" aria-describedby="zone-codes-error area-help"' in refused.text
    assert '<p class="field-error" id="zone-codes-error"' in refused.text
    assert ">Zone codes: not zone or county codes: bogus." in refused.text
    assert settings_of(station).zone_codes == ("VAZ057", "051099")

    # Checkboxes arrive as repeated fields; none ticked means no event is forwarded.
    events = ops.request(
        "POST", FILTERING, csrf=False, headers=form,
        body=f"csrf_token={ops.csrf}&storage_zone_codes=&forward_events=TOR&forward_events=SVR",
    )  # fmt: skip
    assert events.status_code == 303
    assert settings_of(station).forward_events == ("SVR", "TOR")
    cleared = ops.request(
        "POST", FILTERING, csrf=False, headers=form,
        body=f"csrf_token={ops.csrf}&storage_zone_codes=040000",
    )  # fmt: skip
    assert cleared.status_code == 303
    assert settings_of(station) == AlertSettings(("VAZ057", "051099"), ("040000",), ())
    assert [row[1] for row in config_rows(station)] == [
        ["zone_codes"],
        ["forward_events"],
        ["forward_events", "storage_zone_codes"],
    ]
