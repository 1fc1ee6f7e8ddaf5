"""Sign-in by JSON and by form, CSRF on cookie sessions, password change."""

from __future__ import annotations

import re

import pytest

from alertstation.auth.resources import safe_next
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.http.routing import STATE_CHANGING
from tests.support import PASSWORD
from tests.support import StationHarness as Station


def test_json_sign_in_answers_the_csrf_token_and_a_safe_cookie(station: Station) -> None:
    station.add_user("ops", "operator")
    result = station.client.simulate_post(
        "/auth/login", json={"username": "OPS", "password": PASSWORD}
    )
    assert result.status_code == 200
    assert result.json["user"]["username"] == "ops"
    assert len(result.json["csrf_token"]) >= 32
    cookie = result.cookies[COOKIE_NAME]
    assert cookie.http_only and cookie.same_site == "Lax" and cookie.path == "/"
    assert cookie.max_age == 12 * 3600
    assert not cookie.secure, "plain http: not Secure"
    secure = station.client.simulate_post(
        "/auth/login",
        json={"username": "ops", "password": PASSWORD},
        headers={"X-Forwarded-Proto": "https"},
        remote_addr="127.0.0.1",
    )
    assert secure.cookies[COOKIE_NAME].secure


@pytest.mark.parametrize(
    "body",
    [
        {"username": "ops", "password": "wrong password here"},
        {"username": "nobody", "password": PASSWORD},
        {"username": "ops"},
        {"username": 5, "password": PASSWORD},
    ],
)
def test_failed_sign_in_is_401_and_sets_no_cookie(station: Station, body: dict) -> None:  # type: ignore[type-arg]
    station.add_user("ops", "operator")
    result = station.client.simulate_post("/auth/login", json=body)
    assert result.status_code == 401
    assert result.json["error"]["code"] == "invalid_credentials"
    assert COOKIE_NAME not in result.cookies


def test_disabled_account_cannot_sign_in(station: Station) -> None:
    station.add_user("boss", "admin")
    ops_id = station.add_user("ops", "operator")
    boss = station.sign_in("boss")
    boss.request("PATCH", f"/admin/users/{ops_id}", json={"is_active": False})
    result = station.client.simulate_post(
        "/auth/login", json={"username": "ops", "password": PASSWORD}
    )
    assert result.status_code == 401


def test_form_sign_in_redirects_to_a_local_next_only(station: Station) -> None:
    station.add_user("ops", "operator")
    ok = station.client.simulate_post(
        "/auth/login",
        body=f"username=ops&password={PASSWORD.replace(' ', '+')}&next=/docs",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert ok.status_code == 303 and ok.headers["location"].endswith("/docs")
    assert COOKIE_NAME in ok.cookies
    bad = station.client.simulate_post(
        "/auth/login",
        body="username=ops&password=nope&next=/docs",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert bad.status_code == 401
    assert 'role="alert"' in bad.text and 'value="ops"' in bad.text


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/admin/users", "/admin/users"),
        ("/logs?type=audit", "/logs?type=audit"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("javascript:alert(1)", "/"),
        (None, "/"),
    ],
)
def test_safe_next(target: str | None, expected: str) -> None:
    assert safe_next(target) == expected


def test_browser_is_sent_to_sign_in_and_back(station: Station) -> None:
    result = station.client.simulate_get("/admin/users", headers={"Accept": "text/html"})
    assert result.status_code == 303
    assert result.headers["location"] == "/login?next=%2Fadmin%2Fusers"
    page = station.client.simulate_get("/login", params={"next": "/admin/users"})
    assert page.status_code == 200 and 'name="next" value="/admin/users"' in page.text


def test_every_cookie_authenticated_change_needs_the_csrf_token(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    checked = 0
    for route in station.app.registry:
        if route.method not in STATE_CHANGING or route.path == "/auth/login":
            continue
        path = re.sub(r"\{\w+:int\}", "999", route.path)
        missing = boss.request(route.method, path, csrf=False, json={})
        assert missing.status_code == 403, route
        assert missing.json["error"]["code"] == "csrf_failed"
        wrong = boss.request(route.method, path, csrf=False, json={}, headers={"X-CSRF-Token": "x"})
        assert wrong.status_code == 403, route
        checked += 1
    assert checked >= 6
    assert boss.request("GET", "/auth/session").status_code == 200


def test_form_field_csrf_token_works_for_sign_out(station: Station) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    result = station.client.simulate_post(
        "/auth/logout",
        body=f"csrf_token={ops.csrf}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        cookies={COOKIE_NAME: ops.cookie},
    )
    assert result.status_code == 303 and result.headers["location"].endswith("/login")


def test_forged_cookie_is_ignored(station: Station) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    token, signature = ops.cookie.split(".")

    def flip(text: str) -> str:
        return text[:-1] + ("B" if text[-1] == "A" else "A")

    for forged in (f"{token}.{flip(signature)}", f"{flip(token)}.{signature}", token, "a.b.c"):
        result = station.client.simulate_get("/auth/session", cookies={COOKIE_NAME: forged})
        assert result.status_code == 401


def test_password_change_signs_out_other_sessions(station: Station) -> None:
    station.add_user("ops", "operator")
    here = station.sign_in("ops")
    elsewhere = station.sign_in("ops")
    wrong = here.request(
        "POST",
        "/account/password",
        json={"current_password": "not it at all", "new_password": "a brand new secret"},
    )
    assert wrong.status_code == 422 and wrong.json["error"]["code"] == "wrong_password"
    short = here.request(
        "POST", "/account/password", json={"current_password": PASSWORD, "new_password": "short"}
    )
    assert short.status_code == 422
    ok = here.request(
        "POST",
        "/account/password",
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert ok.status_code == 200 and ok.json["other_sessions_ended"] == 1
    assert here.request("GET", "/auth/session").status_code == 200
    assert elsewhere.request("GET", "/auth/session").status_code == 401
    station.sign_in("ops", password="a brand new secret")


def test_viewer_may_sign_out_and_change_password_but_demo_may_not_change_it(
    station: Station,
) -> None:
    station.add_user("watcher", "viewer")
    station.add_user("guest", "demo")
    viewer = station.sign_in("watcher")
    changed = viewer.request(
        "POST",
        "/account/password",
        json={"current_password": PASSWORD, "new_password": "viewer has a new one"},
    )
    assert changed.status_code == 200
    demo = station.sign_in("guest")
    refused = demo.request(
        "POST",
        "/account/password",
        json={"current_password": PASSWORD, "new_password": "demo has a new one"},
    )
    assert refused.status_code == 403
    assert demo.request("POST", "/auth/logout").status_code == 200
