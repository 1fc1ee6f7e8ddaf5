"""Auto-forward settings routes and page: access, validation, config.updated audit."""

from __future__ import annotations

import orjson
import pytest

from tests.eas.test_forward_support import audit_rows, cap_message, configure, ingest, later
from tests.support import SignedIn, StationHarness


@pytest.fixture
def users(station: StationHarness) -> dict[str, SignedIn]:
    for role in ("admin", "operator", "viewer", "demo"):
        station.add_user(role, role)
    return {role: station.sign_in(role) for role in ("admin", "operator", "viewer", "demo")}


def test_defaults_and_who_may_read(station: StationHarness, users: dict[str, SignedIn]) -> None:
    answer = users["viewer"].request("GET", "/admin/eas/forward")
    assert answer.status_code == 200
    assert answer.json["settings"] == {
        "enabled": False,
        "station_id": "ALRTSTN",
        "attention_seconds": 8.0,
        "nwr_tone": False,
        "include_voice": True,
        "max_age_minutes": 60,
    }
    assert answer.json["queue"] == []
    assert users["demo"].request("GET", "/admin/eas/forward").status_code == 403
    assert station.client.simulate_get("/admin/eas/forward").status_code == 401


def test_operator_saves_and_the_change_is_audited(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    body = {"enabled": True, "station_id": "wxyz/fm", "attention_seconds": 10, "nwr_tone": False}
    answer = users["operator"].request("PUT", "/admin/eas/forward", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json["changed"] == ["attention_seconds", "enabled", "station_id"]
    assert answer.json["settings"]["station_id"] == "WXYZ/FM"
    again = users["operator"].request("GET", "/admin/eas/forward").json["settings"]
    assert (again["enabled"], again["attention_seconds"]) == (True, 10.0)
    (row,) = audit_rows(station.engine, "config.updated")
    assert (row.username, row.target) == ("operator", "eas_forward")
    details = orjson.loads(row.details)
    assert details["fields"] == ["attention_seconds", "enabled", "station_id"]
    assert details["changes"]["station_id"]["new"] == "WXYZ/FM"
    assert details["changes"]["enabled"] == {"old": False, "new": True}


@pytest.mark.parametrize("role", ["viewer", "demo"])
def test_read_only_roles_cannot_save(
    station: StationHarness, users: dict[str, SignedIn], role: str
) -> None:
    answer = users[role].request("PUT", "/admin/eas/forward", json={"enabled": True})
    assert answer.status_code == 403
    assert audit_rows(station.engine, "config.updated") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"attention_seconds": 5}, "attention_seconds"),
        ({"attention_seconds": "8"}, "attention_seconds"),
        ({"station_id": "BAD-ID"}, "station_id"),
        ({"station_id": "TOOLONGID"}, "station_id"),
        ({"enabled": "yes"}, "enabled"),
        ({"max_age_minutes": 0}, "max_age_minutes"),
        ({"volume": 3}, "volume"),
    ],
)
def test_bad_values_are_422_and_nothing_is_saved(
    station: StationHarness, users: dict[str, SignedIn], body: dict[str, object], field: str
) -> None:
    answer = users["admin"].request("PUT", "/admin/eas/forward", json={"enabled": True, **body})
    assert answer.status_code == 422, answer.text
    assert answer.json["error"]["details"]["field"] == field
    assert users["admin"].request("GET", "/admin/eas/forward").json["settings"]["enabled"] is False
    assert audit_rows(station.engine, "config.updated") == []


def test_the_page_shows_settings_schedule_and_queue(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    st = station.app.station
    configure(st)
    now = station.clock.now
    ingest(st, cap_message("tor-page", now, expires=later(now, minutes=30)), now)
    page = users["viewer"].request("GET", "/eas/forward")
    assert page.status_code == 200
    assert 'id="eas-forward-readonly"' in page.text
    assert 'data-queue-id="' in page.text and 'data-state="pending"' in page.text
    assert 'id="eas-rwt-test"' not in page.text  # viewers may not air a test
    operator = users["operator"].request("GET", "/eas/forward")
    assert 'id="eas-rwt-test"' in operator.text and "eas-forward-readonly" not in operator.text
    assert users["demo"].request("GET", "/eas/forward").status_code == 403
