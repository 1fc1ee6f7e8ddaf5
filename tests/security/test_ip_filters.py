"""The ban list API: list, add, edit, remove; validation, audit rows, generation, lockout risk."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select

from alertstation.db import read_generation
from alertstation.security.bans.tables import BANS_GENERATION, ip_filters
from tests.security.conftest import ADMIN_IP
from tests.support import SignedIn
from tests.support import StationHarness as Station

Rows = Callable[[], list[dict[str, Any]]]
PATH = "/security/ip-filters"


def add(who: SignedIn, **body: Any) -> Any:
    """POST an entry from the admin's address."""
    return who.request("POST", PATH, json=body, remote_addr=ADMIN_IP)


def z(moment: datetime) -> str:
    """Format a UTC time as the API does."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def generation(engine: Engine) -> int:
    with engine.connect() as conn:
        return read_generation(conn, BANS_GENERATION)


def test_add_list_edit_remove_with_audit_rows(
    station: Station, admin: SignedIn, audit_rows: Rows, engine: Engine
) -> None:
    start = generation(engine)
    created = add(admin, value="203.0.113.7", reason="scanner", description="port scan")
    assert created.status_code == 201, created.text
    entry = created.json["filter"]
    assert entry["value"] == "203.0.113.7" and entry["kind"] == "blocklist"
    assert entry["active"] is True and entry["enforced"] is True and entry["expired"] is False
    assert entry["source"] == "manual" and entry["source_label"] == "Manual"
    assert entry["is_range"] is False and entry["expires_at"] is None
    assert entry["created_at"] == z(station.clock())
    assert generation(engine) == start + 1

    listed = admin.request("GET", PATH, remote_addr=ADMIN_IP)
    assert listed.status_code == 200
    assert listed.json["allowlist_mode"] is False and listed.json["client_ip"] == ADMIN_IP
    [shown] = listed.json["filters"]
    assert shown == entry
    assert "location" not in shown, "no GeoIP database is configured"

    path = f"{PATH}/{entry['id']}"
    toggled = admin.request("PATCH", path, json={"active": False}, remote_addr=ADMIN_IP)
    assert toggled.status_code == 200, toggled.text
    assert toggled.json["changed"] == ["active"] and toggled.json["filter"]["enforced"] is False
    same = admin.request("PATCH", path, json={"active": False}, remote_addr=ADMIN_IP)
    assert same.json["changed"] == []
    edited = admin.request(
        "PATCH",
        path,
        json={"active": True, "value": "203.0.113.0/24", "source": "flood", "duration_minutes": 30},
        remote_addr=ADMIN_IP,
    )
    assert edited.json["changed"] == ["active", "expires_at", "source", "value"]
    assert edited.json["filter"]["source_label"] == "Flood"
    assert edited.json["filter"]["expires_at"] == z(station.clock() + timedelta(minutes=30))
    assert generation(engine) == start + 3

    removed = admin.request("DELETE", path, remote_addr=ADMIN_IP)
    assert removed.status_code == 200 and removed.json == {"deleted": entry["id"]}
    assert admin.request("DELETE", path, remote_addr=ADMIN_IP).status_code == 404
    assert admin.request("PATCH", path, json={"active": True}).status_code == 404
    assert generation(engine) == start + 4

    actions = [(row["action"], row["target"]) for row in audit_rows()]
    assert actions[-4:] == [
        ("ban.created", "203.0.113.7"),
        ("ban.updated", "203.0.113.7"),
        ("ban.updated", "203.0.113.0/24"),
        ("ban.deleted", "203.0.113.0/24"),
    ]
    last = audit_rows()[-1]
    assert last["client_ip"] == ADMIN_IP
    assert orjson.loads(last["details"])["kind"] == "blocklist"


def test_allowlist_changes_are_audited_as_allowlist(
    station: Station, admin: SignedIn, audit_rows: Rows
) -> None:
    created = add(admin, value="198.51.100.0/24", kind="allowlist")
    assert created.status_code == 201, created.text
    path = f"{PATH}/{created.json['filter']['id']}"
    admin.request("PATCH", path, json={"reason": "office"}, remote_addr=ADMIN_IP)
    admin.request("DELETE", path, remote_addr=ADMIN_IP)
    actions = [row["action"] for row in audit_rows()]
    assert actions[-3:] == ["allowlist.created", "allowlist.updated", "allowlist.deleted"]


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("192.0.2.7/32", "192.0.2.7"),
        (" 2001:DB8::0/32 ", "2001:db8::/32"),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ("::FFFF:192.0.2.9", "192.0.2.9"),
        ("2001:db8:0:0::1", "2001:db8::1"),
        ("10.0.0.0/255.0.0.0", "10.0.0.0/8"),
    ],
)
def test_values_are_normalised(station: Station, admin: SignedIn, given: str, stored: str) -> None:
    created = add(admin, value=given)
    assert created.status_code == 201, created.text
    assert created.json["filter"]["value"] == stored


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "value"),
        ({"value": "not-an-ip"}, "value"),
        ({"value": "10.1.2.3/8"}, "value"),
        ({"value": "fe80::1%eth0"}, "value"),
        ({"value": "192.0.2.1", "kind": "greylist"}, "kind"),
        ({"value": "192.0.2.1", "source": "geoip"}, "source"),
        ({"value": "192.0.2.1", "reason": "x" * 256}, "reason"),
        ({"value": "192.0.2.1", "active": "yes"}, "active"),
        ({"value": "192.0.2.1", "expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
        ({"value": "192.0.2.1", "expires_at": "tomorrow"}, "expires_at"),
        ({"value": "192.0.2.1", "duration_minutes": 0}, "duration_minutes"),
        ({"value": "192.0.2.1", "duration_minutes": True}, "duration_minutes"),
        ({"value": "192.0.2.1", "duration_minutes": 5, "expires_at": "2027-01-01"}, "expires_at"),
        ({"value": "192.0.2.1", "colour": "red"}, "colour"),
    ],
)
def test_bad_entries_are_422_naming_the_field(
    station: Station, admin: SignedIn, engine: Engine, body: dict[str, Any], field: str
) -> None:
    before = generation(engine)
    result = add(admin, **body)
    assert result.status_code == 422, result.text
    assert result.json["error"]["code"] == "invalid"
    assert result.json["error"]["details"]["field"] == field
    assert generation(engine) == before


def test_duplicates_conflict_but_both_kinds_may_hold_a_value(
    station: Station, admin: SignedIn
) -> None:
    assert add(admin, value="192.0.2.1").status_code == 201
    again = add(admin, value="::ffff:192.0.2.1")
    assert again.status_code == 409 and again.json["error"]["code"] == "duplicate"
    allow = add(admin, value="192.0.2.1", kind="allowlist", confirm_lockout=True)
    assert allow.status_code == 201
    other = add(admin, value="192.0.2.2").json["filter"]
    clash = admin.request(
        "PATCH", f"{PATH}/{other['id']}", json={"value": "192.0.2.1"}, remote_addr=ADMIN_IP
    )
    assert clash.status_code == 409 and clash.json["error"]["code"] == "duplicate"


def test_kind_cannot_be_changed_and_expired_entries_need_a_new_expiry(
    station: Station, admin: SignedIn
) -> None:
    entry = add(admin, value="192.0.2.1", duration_minutes=5).json["filter"]
    path = f"{PATH}/{entry['id']}"
    kind = admin.request("PATCH", path, json={"kind": "allowlist"}, remote_addr=ADMIN_IP)
    assert kind.status_code == 422
    station.clock.advance(minutes=6)
    enable = admin.request("PATCH", path, json={"active": True}, remote_addr=ADMIN_IP)
    assert enable.status_code == 422, "active but expired: enabling it needs a new expiry"
    listed = admin.request("GET", PATH, remote_addr=ADMIN_IP).json["filters"][0]
    assert listed["active"] is False and listed["expired"] is True  # listing deactivates
    refused = admin.request("PATCH", path, json={"active": True}, remote_addr=ADMIN_IP)
    assert refused.status_code == 422 and refused.json["error"]["details"]["field"] == "expires_at"
    renewed = admin.request(
        "PATCH", path, json={"active": True, "duration_minutes": 60}, remote_addr=ADMIN_IP
    )
    assert renewed.status_code == 200 and renewed.json["filter"]["enforced"] is True
    permanent = admin.request("PATCH", path, json={"expires_at": None}, remote_addr=ADMIN_IP)
    assert permanent.json["changed"] == ["expires_at"]
    assert permanent.json["filter"]["expires_at"] is None


def test_naive_expiry_is_utc(station: Station, admin: SignedIn) -> None:
    in_an_hour = station.clock() + timedelta(hours=1)
    naive = in_an_hour.replace(tzinfo=None).isoformat()
    created = add(admin, value="192.0.2.1", expires_at=naive)
    assert created.json["filter"]["expires_at"] == z(in_an_hour)
    plus_two = in_an_hour.astimezone(timezone(timedelta(hours=2))).isoformat()
    offset = add(admin, value="192.0.2.2", expires_at=plus_two)
    assert offset.json["filter"]["expires_at"] == z(in_an_hour)


def test_only_user_managers_change_the_list_and_anyone_signed_in_reads_it(
    station: Station,
) -> None:
    station.add_user("ops", "operator")
    station.add_user("view", "viewer")
    operator = station.sign_in("ops")
    viewer = station.sign_in("view")
    assert operator.request("POST", PATH, json={"value": "192.0.2.1"}).status_code == 403
    assert viewer.request("POST", PATH, json={"value": "192.0.2.1"}).status_code == 403
    assert viewer.request("GET", PATH).status_code == 200
    assert station.client.simulate_get(PATH).status_code == 401


# --- lockout risk --------------------------------------------------------------------------


def test_allowlist_without_own_address_is_a_lockout_risk(
    station: Station, admin: SignedIn, engine: Engine, audit_rows: Rows
) -> None:
    before, audited = generation(engine), len(audit_rows())
    risky = add(admin, value="203.0.113.0/24", kind="allowlist")
    assert risky.status_code == 409
    assert risky.json["error"]["code"] == "lockout_risk"
    assert risky.json["error"]["details"]["client_ip"] == ADMIN_IP
    assert admin.request("GET", PATH, remote_addr=ADMIN_IP).json["filters"] == []
    assert generation(engine) == before and len(audit_rows()) == audited, "rolled back"
    confirmed = add(admin, value="203.0.113.0/24", kind="allowlist", confirm_lockout=True)
    assert confirmed.status_code == 201
    assert orjson.loads(audit_rows()[-1]["details"])["confirm_lockout"] is True
    # Allowlist mode now excludes the admin: any further allowlist change needs confirmation.
    mine = add(admin, value=ADMIN_IP, kind="allowlist", active=False)
    assert mine.status_code == 409
    mine = add(admin, value=ADMIN_IP, kind="allowlist")
    assert mine.status_code == 201, "covering the requester again is safe"


def test_enabling_editing_or_removing_allowlist_entries_checks_the_result(
    station: Station, admin: SignedIn
) -> None:
    own = add(admin, value="198.51.100.0/24", kind="allowlist").json["filter"]
    other = add(admin, value="203.0.113.5", kind="allowlist").json["filter"]
    own_path, other_path = f"{PATH}/{own['id']}", f"{PATH}/{other['id']}"
    off = admin.request("PATCH", own_path, json={"active": False}, remote_addr=ADMIN_IP)
    assert off.status_code == 409 and off.json["error"]["code"] == "lockout_risk"
    moved = admin.request("PATCH", own_path, json={"value": "192.0.2.0/24"}, remote_addr=ADMIN_IP)
    assert moved.status_code == 409
    removed = admin.request("DELETE", own_path, remote_addr=ADMIN_IP)
    assert removed.status_code == 409
    removed = admin.request(
        "DELETE", own_path, params={"confirm_lockout": "true"}, remote_addr=ADMIN_IP
    )
    assert removed.status_code == 200
    enabled_other = admin.request("PATCH", other_path, json={"reason": "x"}, remote_addr=ADMIN_IP)
    assert enabled_other.status_code == 409, "allowlist mode still excludes the admin"
    gone = admin.request("DELETE", other_path, json={"confirm_lockout": True}, remote_addr=ADMIN_IP)
    assert gone.status_code == 200
    fresh = add(admin, value="203.0.113.9", kind="allowlist", active=False)
    assert fresh.status_code == 201, "an inactive entry leaves allowlist mode off"
    enable = admin.request(
        "PATCH", f"{PATH}/{fresh.json['filter']['id']}", json={"active": True}, remote_addr=ADMIN_IP
    )
    assert enable.status_code == 409


def test_banning_own_address_is_a_lockout_risk_except_from_loopback(
    station: Station, admin: SignedIn
) -> None:
    risky = add(admin, value="198.51.100.0/24")
    assert risky.status_code == 409 and risky.json["error"]["code"] == "lockout_risk"
    assert risky.json["error"]["details"]["value"] == "198.51.100.0/24"
    inactive = add(admin, value="198.51.100.0/24", active=False)
    assert inactive.status_code == 201
    path = f"{PATH}/{inactive.json['filter']['id']}"
    enable = admin.request("PATCH", path, json={"active": True}, remote_addr=ADMIN_IP)
    assert enable.status_code == 409
    local = admin.request("PATCH", path, json={"active": True}, remote_addr="127.0.0.1")
    assert local.status_code == 200, "loopback is never banned, so no risk"
    assert admin.request("GET", PATH, remote_addr=ADMIN_IP).status_code == 403
    assert admin.request("GET", PATH, remote_addr="127.0.0.1").status_code == 200
    loopback = admin.request("POST", PATH, json={"value": "127.0.0.1"}, remote_addr="127.0.0.1")
    assert loopback.status_code == 201


# --- expiry ----------------------------------------------------------------------------------


def test_deactivate_expired_tolerates_naive_timestamps(engine: Engine, station: Station) -> None:
    from alertstation.security.bans.service import deactivate_expired

    now = datetime(2026, 11, 21, 12, 0)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SET LOCAL TIME ZONE 'UTC'")
        for value, expires in [
            ("192.0.2.1", now - timedelta(minutes=1)),  # naive, past
            ("192.0.2.2", now + timedelta(minutes=1)),  # naive, future
            ("192.0.2.3", (now - timedelta(hours=1)).replace(tzinfo=UTC)),
            ("192.0.2.4", None),
        ]:
            # Through the plain column type, so a naive value is stored as given (old code did).
            conn.execute(
                ip_filters.insert().values(
                    value=value, kind="blocklist", active=True, created_at=now, source="manual"
                )
            )
            conn.exec_driver_sql(
                "UPDATE ip_filters SET expires_at = %s WHERE value = %s"
                if conn.dialect.name == "postgresql"
                else "UPDATE ip_filters SET expires_at = ? WHERE value = ?",
                (expires.replace(tzinfo=None) if expires else None, value),
            )
    with engine.begin() as conn:
        before = read_generation(conn, BANS_GENERATION)
        assert deactivate_expired(conn, now) == 2  # naive "now" is UTC too
        assert deactivate_expired(conn, now.replace(tzinfo=UTC)) == 0
        assert read_generation(conn, BANS_GENERATION) == before + 1
        active = dict(conn.execute(select(ip_filters.c.value, ip_filters.c.active)).all())
    assert active == {"192.0.2.1": False, "192.0.2.2": True, "192.0.2.3": False, "192.0.2.4": True}
