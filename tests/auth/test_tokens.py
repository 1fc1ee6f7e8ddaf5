"""API tokens: made once, stored as an HMAC, bearer-only, scoped, limited, audited, revocable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, update

from alertstation.audit.tables import audit_logs
from alertstation.auth import guard, sessions
from alertstation.auth.middleware import SessionMiddleware
from alertstation.auth.service import get_user
from alertstation.auth.tables import api_tokens, users
from alertstation.auth.tokens import service as tokens
from alertstation.db.engine import begin_write
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.entries import NewFilter
from alertstation.security.bans.service import create_filter
from alertstation.security.bans.tables import ALLOWLIST
from tests.support import SignedIn
from tests.support import StationHarness as Station

# HTTP rules that touch no SQL of their own run on one backend; the token store runs on both.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _account(station: Station, username: str, role: str) -> SignedIn:
    """Add an account and a signed-in browser for it (no argon2: the password is never used)."""
    now = station.clock.now
    with begin_write(station.engine) as conn:
        user_id = conn.execute(
            insert(users)
            .values(
                username=username,
                password_hash="!",
                role=role,
                created_at=now,
                updated_at=now,
                password_changed_at=now,
            )
            .returning(users.c.id)
        ).scalar_one()
        user = get_user(conn, user_id)
        cookie, session = sessions.start_session(
            conn,
            user,
            source_ip="127.0.0.1",
            user_agent=None,
            now=now,
            secret_key=station.app.station.settings.secret_key,
        )
    return SignedIn(station.client, cookie, session.csrf_token, user.as_dict())


def _make(browser: SignedIn, name: str = "noc", scopes: Any = ("read",), **extra: Any) -> Any:
    return browser.request(
        "POST", "/api/tokens", json={"name": name, "scopes": list(scopes), **extra}
    )


def _token(browser: SignedIn, name: str = "noc", scopes: Any = ("read",), **extra: Any) -> str:
    result = _make(browser, name, scopes, **extra)
    assert result.status_code == 201, result.text
    return result.json["token"]


def _bearer(station: Station, token: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
    return station.client.simulate_request(method, path, headers=headers, **kwargs)


def _rows(station: Station) -> list[Any]:
    with station.engine.connect() as conn:
        return list(conn.execute(select(api_tokens).order_by(api_tokens.c.id)))


def _failed_token_events(station: Station) -> int:
    with station.engine.connect() as conn:
        found = conn.execute(
            select(security_events.c.id).where(
                security_events.c.kind == "login_failure", security_events.c.detail == "api token"
            )
        )
        return len(list(found))


def test_a_token_is_shown_once_and_stored_as_its_hmac(station: Station) -> None:
    browser = _account(station, "boss", "admin")
    result = _make(browser, "noc dashboard", ["read", "eas.broadcast"], expires_in_days=30)
    assert result.status_code == 201, result.text
    token = result.json["token"]
    assert token.startswith("ast_") and len(token) == 4 + 43
    (row,) = _rows(station)
    key = station.app.station.settings.secret_key
    assert row.token_hash == tokens.token_digest(key, token) != token
    assert row.prefix == token[:8]
    assert row.scopes == "read eas.broadcast"
    assert row.expires_at == station.clock.now + timedelta(days=30)
    listed = browser.request("GET", "/api/tokens").json
    assert [t["name"] for t in listed["tokens"]] == ["noc dashboard"]
    assert token not in str(listed) and row.token_hash not in str(listed)
    with station.engine.connect() as conn:
        audit = conn.execute(select(audit_logs).where(audit_logs.c.action == "token.created")).one()
    assert token not in audit.details and row.token_hash not in audit.details
    assert audit.target == "token noc dashboard of boss"


def test_bearer_alone_authenticates_and_cookies_are_ignored(station: Station) -> None:
    admin = _account(station, "boss", "admin")
    token = _token(_account(station, "watcher", "viewer"), "wall")
    seen = _bearer(
        station, token, "GET", "/auth/session", cookies={"alertstation_session": admin.cookie}
    )
    assert seen.status_code == 200
    assert seen.json["user"]["username"] == "watcher"
    assert seen.json["token"]["name"] == "wall" and seen.json["csrf_token"] is None
    # a bad token is refused even beside a valid cookie
    bad = _bearer(
        station,
        "ast_" + "A" * 43,
        "GET",
        "/auth/session",
        cookies={"alertstation_session": admin.cookie},
    )
    assert bad.status_code == 401 and bad.json["error"]["code"] == "invalid_token"
    garbled = station.client.simulate_get("/auth/session", headers={"Authorization": "Basic eDp5"})
    assert garbled.status_code == 401


def test_no_csrf_for_tokens_and_audit_rows_name_the_token(station: Station) -> None:
    token = _token(_account(station, "boss", "admin"), "provisioner", ["system.manage_users"])
    made = _bearer(
        station,
        token,
        "POST",
        "/admin/users",
        json={"username": "newcomer", "role": "viewer", "password": "a long enough password"},
    )
    assert made.status_code == 201, made.text
    with station.engine.connect() as conn:
        row = conn.execute(select(audit_logs).where(audit_logs.c.action == "user.created")).one()
        owner_id = conn.execute(select(users.c.id).where(users.c.username == "boss")).scalar()
    assert row.username == "token provisioner of boss"
    assert row.user_id == owner_id


def test_rights_are_scopes_meet_the_owners_current_rights(station: Station) -> None:
    boss = _account(station, "boss", "admin")
    boss_id = boss.user["id"]
    token = _token(boss, "t", ["read", "system.manage_users"])
    assert _bearer(station, token, "GET", "/api/admin/users").status_code == 200
    # a scope the token lacks: refused though the owner has it
    denied = _bearer(station, token, "GET", "/admin/environment")
    assert denied.status_code == 403 and denied.json["error"]["code"] == "token_scope"
    with begin_write(station.engine) as conn:
        conn.execute(update(users).where(users.c.id == boss_id).values(role="operator"))
    assert _bearer(station, token, "GET", "/api/admin/users").status_code == 403
    assert _bearer(station, token, "GET", "/auth/session").status_code == 200
    with begin_write(station.engine) as conn:
        conn.execute(update(users).where(users.c.id == boss_id).values(role="admin"))
    assert _bearer(station, token, "GET", "/api/admin/users").status_code == 200


def test_disabled_and_deleted_owners_tokens_stop(station: Station) -> None:
    admin = _account(station, "boss", "admin")
    ops = _account(station, "ops", "operator")
    ops_id = ops.user["id"]
    token = _token(ops)
    assert _bearer(station, token, "GET", "/auth/session").status_code == 200
    assert (
        admin.request("PATCH", f"/admin/users/{ops_id}", json={"is_active": False}).status_code
        == 200
    )
    assert _bearer(station, token, "GET", "/auth/session").status_code == 401
    assert admin.request("DELETE", f"/admin/users/{ops_id}").status_code == 200
    assert _rows(station) == []  # deleted with the account
    assert _bearer(station, token, "GET", "/auth/session").status_code == 401


def test_expired_revoked_and_unknown_tokens_count_as_failed_sign_ins(station: Station) -> None:
    browser = _account(station, "ops", "operator")
    short = _token(browser, "short", expires_in_days=1)
    revoked = _token(browser, "gone")
    assert _bearer(station, short, "GET", "/auth/session").status_code == 200
    gone_id = _rows(station)[1].id
    assert browser.request("DELETE", f"/api/tokens/{gone_id}").status_code == 200
    assert browser.request("DELETE", f"/api/tokens/{gone_id}").status_code == 404
    station.clock.advance(days=1)
    before = _failed_token_events(station)
    for token in (short, revoked, "ast_" + "B" * 43):
        result = _bearer(station, token, "GET", "/auth/session")
        assert result.status_code == 401 and result.json["error"]["code"] == "invalid_token"
    assert _failed_token_events(station) == before + 3
    with station.engine.connect() as conn:
        states = {t.name: t.state(station.clock.now) for t in tokens.list_tokens(conn)}
    assert states == {"short": "expired", "gone": "revoked"}


@SQLITE_ONLY
def test_self_service_and_token_routes_take_cookie_sessions_only(station: Station) -> None:
    browser = _account(station, "boss", "admin")
    token = _token(browser, "all", ["read", "system.manage_users", "admin"])
    token_id = _rows(station)[0].id
    for method, path, body in [
        ("GET", "/api/tokens", None),
        ("POST", "/api/tokens", {"name": "more", "scopes": ["read"]}),
        ("DELETE", f"/api/tokens/{token_id}", None),
        ("GET", "/account/tokens", None),
        ("GET", "/admin/tokens", None),
        ("DELETE", f"/api/admin/tokens/{token_id}", None),
        ("POST", "/auth/logout", None),
        ("POST", "/account/password", {"current_password": "x", "new_password": "y" * 16}),
    ]:
        result = _bearer(station, token, method, path, json=body)
        assert result.status_code == 403, (method, path, result.text)
        assert result.json["error"]["code"] == "token_not_accepted"
    assert len(_rows(station)) == 1 and _rows(station)[0].revoked_at is None


@SQLITE_ONLY
def test_the_allowlist_holds_tokens_to_listed_addresses_loopback_included(station: Station) -> None:
    token = _token(_account(station, "ops", "operator"))
    with begin_write(station.engine) as conn:
        create_filter(
            conn,
            NewFilter(value="203.0.113.0/24", kind=ALLOWLIST),
            now=station.clock.now,
            requester_ip="203.0.113.1",
        )
    refused = _bearer(station, token, "GET", "/auth/session", remote_addr="127.0.0.1")
    assert refused.status_code == 403 and refused.json["error"]["code"] == "login_not_allowed"
    assert (
        _bearer(station, token, "GET", "/auth/session", remote_addr="203.0.113.7").status_code
        == 200
    )


def test_last_use_is_written_at_most_once_a_minute(station: Station) -> None:
    token = _token(_account(station, "ops", "operator"))
    assert _rows(station)[0].last_used_at is None
    _bearer(station, token, "GET", "/auth/session", remote_addr="192.0.2.10")
    first = station.clock.now
    assert (_rows(station)[0].last_used_at, _rows(station)[0].last_used_ip) == (first, "192.0.2.10")
    station.clock.advance(seconds=59)
    _bearer(station, token, "GET", "/auth/session", remote_addr="192.0.2.11")
    assert _rows(station)[0].last_used_at == first
    station.clock.advance(seconds=1)
    _bearer(station, token, "GET", "/auth/session", remote_addr="192.0.2.11")
    assert (_rows(station)[0].last_used_at, _rows(station)[0].last_used_ip) == (
        station.clock.now,
        "192.0.2.11",
    )


@SQLITE_ONLY
def test_who_may_grant_what(station: Station) -> None:
    boss, ops = _account(station, "boss", "admin"), _account(station, "ops", "operator")
    watcher, guest = _account(station, "watcher", "viewer"), _account(station, "guest", "demo")
    assert _make(boss, "a", ["admin", "system.manage_users"]).status_code == 201
    for scopes in (["admin"], ["system.manage_users"], ["nonsense"], [], "read"):
        refused = _make(ops, "b", scopes)
        assert refused.status_code == 422, scopes
        assert refused.json["error"]["details"]["field"] == "scopes"
    assert _make(ops, "b", ["eas.broadcast"]).status_code == 201
    assert _make(ops, "b", ["read"]).status_code == 409  # one name per owner
    assert _make(watcher, "wall", ["read"]).status_code == 201
    assert _make(watcher, "w2", ["eas.broadcast"]).status_code == 422
    assert _make(guest, "g", ["read"]).status_code == 403
    assert _make(ops, "c", ["read"], expires_in_days=0).status_code == 422
    assert _make(ops, "", ["read"]).status_code == 422


def test_managers_list_and_revoke_any_token_and_owners_only_their_own(station: Station) -> None:
    boss, ops = _account(station, "boss", "admin"), _account(station, "ops", "operator")
    token = _token(ops, "playout", ["eas.broadcast"])
    token_id = _rows(station)[0].id
    listed = boss.request("GET", "/admin/tokens", headers={"Accept": "application/json"}).json
    assert [(t["username"], t["name"]) for t in listed["tokens"]] == [("ops", "playout")]
    assert boss.request("DELETE", f"/api/tokens/{token_id}").status_code == 404  # not boss's own
    assert ops.request("DELETE", f"/api/admin/tokens/{token_id}").status_code == 403
    assert boss.request("DELETE", f"/api/admin/tokens/{token_id}").status_code == 200
    assert _bearer(station, token, "GET", "/auth/session").status_code == 401
    with station.engine.connect() as conn:
        row = conn.execute(select(audit_logs).where(audit_logs.c.action == "token.revoked")).one()
    assert (row.username, row.target) == ("boss", "token playout of ops")


@SQLITE_ONLY
def test_the_token_pages_render(station: Station) -> None:
    boss = _account(station, "boss", "admin")
    _token(boss, "wall <b>")
    own = boss.request("GET", "/account/tokens", headers={"Accept": "text/html"})
    assert (
        own.status_code == 200 and "wall &lt;b&gt;" in own.text and "create-token-form" in own.text
    )
    every = boss.request("GET", "/admin/tokens", headers={"Accept": "text/html"})
    assert every.status_code == 200 and "wall &lt;b&gt;" in every.text
    assert (
        'href="/admin/tokens"' in every.text
        and 'href="/account/tokens"'
        in boss.request("GET", "/account", headers={"Accept": "text/html"}).text
    )


def test_the_token_rate_limit_is_600_a_minute_per_token_from_any_address() -> None:
    limit = guard.SignInRateLimit(tokens.RATE_LIMIT, tokens.RATE_WINDOW, exempt_loopback=False)
    start = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert all(limit.attempt("7", start) == 0 for _ in range(600))
    assert limit.attempt("7", start) == 60
    assert limit.attempt("8", start) == 0
    assert limit.attempt("7", start + timedelta(seconds=45)) == 15
    assert limit.attempt("7", start + timedelta(seconds=60)) == 0


@SQLITE_ONLY
def test_past_its_limit_a_token_is_answered_429_with_retry_after(station: Station) -> None:
    (middleware,) = [
        m for m in station.app._unprepared_middleware if isinstance(m, SessionMiddleware)
    ]
    assert (middleware.token_rate_limit.limit, middleware.token_rate_limit.window) == (600, 60)
    middleware.token_rate_limit = guard.SignInRateLimit(3, 60, exempt_loopback=False)
    ops = _account(station, "ops", "operator")
    token, other = _token(ops), _token(ops, "other")
    for _ in range(3):
        assert _bearer(station, token, "GET", "/auth/session").status_code == 200
    limited = _bearer(station, token, "GET", "/auth/session")
    assert limited.status_code == 429
    assert limited.json["error"]["code"] == "token_rate_limited"
    assert limited.headers["Retry-After"] == "60"
    assert _bearer(station, other, "GET", "/auth/session").status_code == 200
    station.clock.advance(seconds=30)
    assert _bearer(station, token, "GET", "/auth/session").headers["Retry-After"] == "30"
    station.clock.advance(seconds=30)
    assert _bearer(station, token, "GET", "/auth/session").status_code == 200


@SQLITE_ONLY
def test_probe_urls_asked_with_a_valid_token_do_not_ban_its_address(station: Station) -> None:
    token = _token(_account(station, "ops", "operator"))
    office, scanner = "198.51.100.40", "203.0.113.66"
    for path in ("/.env", "/wp-login.php", "/.git/config", "/phpmyadmin/"):
        answer = _bearer(station, token, "GET", path, remote_addr=office)
        assert answer.status_code == 404, (path, answer.text)
    assert _bearer(station, token, "GET", "/auth/session", remote_addr=office).status_code == 200
    bogus = "ast_" + "C" * 43
    for _ in range(3):
        last = _bearer(station, bogus, "GET", "/.env", remote_addr=scanner)
    assert last.status_code == 403 and last.json["error"]["code"] == "banned"
