"""User management: create, update, delete, and the last-admin guard."""

from __future__ import annotations

import json

from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from tests.support import PASSWORD
from tests.support import StationHarness as Station


def test_admin_manages_users(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    created = boss.request(
        "POST",
        "/admin/users",
        json={"username": "new.op", "role": "operator", "password": PASSWORD},
    )
    assert created.status_code == 201
    user = created.json["user"]
    assert user["role"] == "operator" and "password" not in str(created.json)
    listing = boss.request("GET", "/api/admin/users").json["users"]
    assert [u["username"] for u in listing] == ["boss", "new.op"]
    changed = boss.request("PATCH", f"/admin/users/{user['id']}", json={"role": "viewer"})
    assert changed.status_code == 200 and changed.json["user"]["role"] == "viewer"
    deleted = boss.request("DELETE", f"/admin/users/{user['id']}")
    assert deleted.status_code == 200
    assert boss.request("DELETE", f"/admin/users/{user['id']}").status_code == 404


def test_bad_input_is_a_clear_error(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    cases = [
        ({"username": "x", "role": "viewer", "password": PASSWORD}, 422),
        ({"username": "ok.name", "role": "root", "password": PASSWORD}, 422),
        ({"username": "ok.name", "role": "viewer", "password": "short"}, 422),
        ({"username": "BOSS", "role": "viewer", "password": PASSWORD}, 409),
        ({"role": "viewer", "password": PASSWORD}, 422),
    ]
    for body, status in cases:
        result = boss.request("POST", "/admin/users", json=body)
        assert result.status_code == status, (body, result.text)
    not_json = boss.request(
        "POST", "/admin/users", body="x", headers={"Content-Type": "text/plain"}
    )
    assert not_json.status_code == 415
    boss_id = boss.user["id"]
    odd = boss.request("PATCH", f"/admin/users/{boss_id}", json={"password": "nope"})
    assert odd.status_code == 422
    listing = boss.request("GET", "/api/admin/users").json["users"]
    assert [u["username"] for u in listing] == ["boss"]


def test_last_admin_cannot_be_demoted_disabled_or_deleted(station: Station) -> None:
    boss_id = station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    for body in ({"role": "operator"}, {"is_active": False}):
        result = boss.request("PATCH", f"/admin/users/{boss_id}", json=body)
        assert result.status_code == 409 and result.json["error"]["code"] == "last_admin"
    second_id = station.add_user("second", "admin")
    second = station.sign_in("second")
    assert second.request("DELETE", f"/admin/users/{second_id}").status_code == 422  # self
    demoted = second.request("PATCH", f"/admin/users/{boss_id}", json={"role": "operator"})
    assert demoted.status_code == 200
    result = boss.request("DELETE", f"/admin/users/{second_id}")
    assert result.status_code == 403, "boss is an operator now"
    refused = second.request("PATCH", f"/admin/users/{second_id}", json={"is_active": False})
    assert refused.status_code == 409


def test_users_page_lists_accounts(station: Station) -> None:
    station.add_user("boss", "admin")
    station.add_user("watcher", "viewer")
    boss = station.sign_in("boss")
    page = boss.request("GET", "/admin/users", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert 'data-username="watcher"' in page.text
    assert f'<meta name="csrf-token" content="{boss.csrf}">' in page.text
    sessions_page = boss.request("GET", "/admin/sessions")
    assert sessions_page.status_code == 200 and "this session" in sessions_page.text


def _fields(answer: object) -> list[str]:
    return [error["field"] for error in answer.json["error"]["details"]["errors"]]


def test_refusals_name_their_fields_every_one_at_once(station: Station) -> None:
    boss_id = station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    bad = boss.request(
        "POST", "/admin/users", json={"username": "x", "role": "root", "password": "short"}
    )
    assert bad.status_code == 422 and _fields(bad) == ["username", "role", "password"]
    assert bad.json["error"]["details"]["field"] == "username"
    taken = boss.request(
        "POST", "/admin/users", json={"username": "BOSS", "role": "viewer", "password": PASSWORD}
    )
    assert taken.status_code == 409 and taken.json["error"]["details"]["field"] == "username"
    for body, field in (({"role": "operator"}, "role"), ({"is_active": False}, "is_active")):
        refused = boss.request("PATCH", f"/admin/users/{boss_id}", json=body)
        assert refused.json["error"]["code"] == "last_admin"
        assert refused.json["error"]["details"]["field"] == field
    own = boss.request(
        "POST",
        "/account/password",
        json={"current_password": "not it at all", "new_password": "short"},
    )
    assert own.json["error"]["code"] == "wrong_password"
    assert _fields(own) == ["current_password", "new_password"]
    assert "new_password must be at least" in own.json["error"]["details"]["errors"][1]["message"]
    same = boss.request(
        "POST", "/account/password", json={"current_password": PASSWORD, "new_password": PASSWORD}
    )
    assert same.json["error"]["details"]["field"] == "new_password"


def test_an_admin_resets_a_password_which_signs_that_account_out(station: Station) -> None:
    boss_id = station.add_user("boss", "admin")
    ops_id = station.add_user("ops", "operator")
    boss = station.sign_in("boss")
    ops = station.sign_in("ops")
    short = boss.request("PATCH", f"/admin/users/{ops_id}", json={"password": "short"})
    assert short.status_code == 422 and short.json["error"]["details"]["field"] == "password"
    assert ops.request("GET", "/auth/session").status_code == 200, "a refusal changes nothing"
    new = "a password the admin chose"
    reset = boss.request("PATCH", f"/admin/users/{ops_id}", json={"password": new})
    assert reset.status_code == 200 and reset.json["changed"] == ["password"]
    assert new not in reset.text
    assert ops.request("GET", "/auth/session").status_code == 401
    station.sign_in("ops", password=new)
    with station.engine.connect() as conn:
        details = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.action == "config.updated", audit_logs.c.target == "user:ops")
            .order_by(audit_logs.c.id.desc())
        ).scalar()
    assert json.loads(details)["fields"] == ["password"] and new not in details
    # An admin resetting their own password keeps the session they did it from.
    elsewhere = station.sign_in("boss")
    mine = boss.request("PATCH", f"/admin/users/{boss_id}", json={"password": new + " too"})
    assert mine.status_code == 200
    assert boss.request("GET", "/auth/session").status_code == 200
    assert elsewhere.request("GET", "/auth/session").status_code == 401
    # Only system.manage_users may.
    assert (
        station.sign_in("ops", password=new)
        .request("PATCH", f"/admin/users/{boss_id}", json={"password": "x" * 20})
        .status_code
        == 403
    )
