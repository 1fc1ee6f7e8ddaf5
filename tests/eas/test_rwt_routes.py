"""Weekly test routes: the schedule (system.configure) and the test airing (eas.broadcast)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import orjson
import pytest

from alertstation.db.engine import begin_write
from alertstation.same import SameHeader
from alertstation.settings_admin import sections as store
from tests.eas.test_forward_support import archived, audit_rows
from tests.support import SignedIn, StationHarness

SCHEDULE = {
    "enabled": True,
    "weekday": "wednesday",
    "time_of_day": "11:00",
    "location_codes": "040109, 040027",
    "station_id": "kxyz/fm",
}


@pytest.fixture
def users(station: StationHarness) -> dict[str, SignedIn]:
    with begin_write(station.engine) as conn:  # the weekly test airs by the station's zone
        store.save(
            conn,
            store.APPLICATION,
            {"time_zone": "America/Chicago"},
            updated_by="t",
            now=station.clock(),
        )
    for role in ("operator", "viewer", "demo"):
        station.add_user(role, role)
    return {role: station.sign_in(role) for role in ("operator", "viewer", "demo")}


def next_wednesday_11_chicago(now: datetime) -> datetime:
    """The first Wednesday 11:00 in Chicago after ``now``, worked out by hand."""
    local = now.astimezone(ZoneInfo("America/Chicago"))
    slot = local.replace(hour=11, minute=0, second=0, microsecond=0)
    slot += timedelta(days=(2 - local.weekday()) % 7)
    return slot if slot > local else slot + timedelta(days=7)


def test_schedule_save_shows_the_next_slot_and_is_audited(
    station: StationHarness, users: dict[str, SignedIn]
) -> None:
    answer = users["operator"].request("PUT", "/admin/eas/rwt", json=SCHEDULE)
    assert answer.status_code == 200, answer.text
    schedule = answer.json["schedule"]
    assert schedule["weekday"] == 2 and schedule["weekday_name"] == "Wednesday"
    assert schedule["location_codes"] == ["040109", "040027"]
    assert schedule["station_id"] == "KXYZ/FM"
    slot = next_wednesday_11_chicago(station.clock())
    assert answer.json["next_slot"] == slot.astimezone(UTC).isoformat()
    assert answer.json["next_slot_local"] == slot.isoformat()
    # Wednesday 11:00 is the default day and time: those two did not change.
    assert answer.json["changed"] == ["enabled", "location_codes", "station_id"]
    assert schedule["time_zone"] == "America/Chicago"  # the station's
    view = users["viewer"].request("GET", "/admin/eas/rwt")
    assert view.status_code == 200 and view.json["next_slot"] == answer.json["next_slot"]
    (row,) = audit_rows(station.engine, "config.updated")
    assert (row.username, row.target) == ("operator", "eas_rwt")
    assert orjson.loads(row.details)["fields"] == answer.json["changed"]
    unchanged = users["operator"].request("PUT", "/admin/eas/rwt", json={"time_of_day": "11:00"})
    assert unchanged.json["changed"] == []
    assert orjson.loads(audit_rows(station.engine, "config.updated")[-1].details) == {"fields": []}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"time_zone": "America/Denver"}, "time_zone"),  # the station's, not the schedule's
        ({"time_of_day": "24:00"}, "time_of_day"),
        ({"weekday": 7}, "weekday"),
        ({"location_codes": "40109"}, "location_codes"),
        ({"location_codes": "099001"}, "location_codes"),
        ({"location_codes": ""}, "location_codes"),  # enabled needs codes
        ({"station_id": "A-B"}, "station_id"),
        ({"voice_text": "x" * 1001}, "voice_text"),
        ({"purge": "0030"}, "purge"),
    ],
)
def test_bad_schedules_are_422(
    station: StationHarness, users: dict[str, SignedIn], body: dict[str, object], field: str
) -> None:
    answer = users["operator"].request("PUT", "/admin/eas/rwt", json={**SCHEDULE, **body})
    assert answer.status_code == 422, answer.text
    assert answer.json["error"]["details"]["field"] == field
    assert users["operator"].request("GET", "/admin/eas/rwt").json["next_slot"] is None
    assert audit_rows(station.engine, "config.updated") == []


@pytest.mark.parametrize("role", ["viewer", "demo"])
def test_read_only_roles_cannot_schedule_or_air(
    station: StationHarness, users: dict[str, SignedIn], role: str
) -> None:
    assert users[role].request("PUT", "/admin/eas/rwt", json=SCHEDULE).status_code == 403
    assert users[role].request("POST", "/eas/rwt/test").status_code == 403
    assert archived(station.engine) == []


def test_operator_airs_a_test_now(station: StationHarness, users: dict[str, SignedIn]) -> None:
    operator = users["operator"]
    refused = operator.request("POST", "/eas/rwt/test")
    assert refused.status_code == 422
    assert refused.json["error"]["details"]["field"] == "location_codes"
    operator.request("PUT", "/admin/eas/rwt", json={**SCHEDULE, "enabled": False})
    answer = operator.request("POST", "/eas/rwt/test")
    assert answer.status_code == 200, answer.text
    assert answer.json["sent"] is True and answer.json["voice"] == "none"
    header = SameHeader.parse(answer.json["message"]["header"])
    assert (header.org, header.event, header.locations) == ("EAS", "RWT", ("040109", "040027"))
    assert header.station_id == "KXYZ/FM"
    (row,) = archived(station.engine)
    assert row.aired_by == "operator"
    (audit,) = audit_rows(station.engine, "eas.broadcast")
    assert (audit.username, audit.target) == ("operator", "eas_rwt:test")
    assert operator.request("POST", "/eas/rwt/test", csrf=False).status_code == 403
