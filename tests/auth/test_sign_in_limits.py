"""Sign-in limits: per-address rate, per-account lock, session cap, current-password guesses."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Engine, delete, select

from alertstation.audit.tables import audit_logs
from alertstation.auth import guard
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.auth.tables import admin_sessions
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.security.autoban.service import record_event
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.entries import NewFilter
from alertstation.security.bans.service import create_filter
from alertstation.security.bans.tables import ALLOWLIST, BANS_GENERATION, ip_filters
from tests.support import PASSWORD, SignedIn
from tests.support import StationHarness as Station

HOME = "198.51.100.20"  # the owner's usual address
ATTACKERS = ["203.0.113.11", "203.0.113.12", "203.0.113.13", "203.0.113.14", "203.0.113.15"]
NEWCOMER = "192.0.2.99"  # an address the account never signed in from


def login(station: Station, address: str, password: str, username: str = "ops") -> Any:
    return station.client.simulate_post(
        "/auth/login", json={"username": username, "password": password}, remote_addr=address
    )


def audit(engine: Engine, action: str) -> list[Any]:
    with engine.connect() as conn:
        query = select(audit_logs).where(audit_logs.c.action == action)
        return list(conn.execute(query.order_by(audit_logs.c.id)))


def details(row: Any) -> dict[str, Any]:
    value = row.details
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def login_failure_events(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        query = select(security_events).where(security_events.c.kind == "login_failure")
        return list(conn.execute(query.order_by(security_events.c.id)))


# --- finding 4: the current password of POST /account/password -------------------------------


def change(who: SignedIn, current: str) -> Any:
    return who.request(
        "POST",
        "/account/password",
        json={"current_password": current, "new_password": "a brand new secret"},
        remote_addr=HOME,
    )


def test_wrong_current_passwords_count_as_failed_sign_ins_and_end_the_session(
    station: Station, engine: Engine
) -> None:
    station.add_user("ops", "operator")
    thief = station.sign_in("ops", remote_addr=HOME)
    for attempt in range(1, guard.PASSWORD_CHECK_LIMIT):
        wrong = change(thief, f"guess number {attempt:04d}")
        assert wrong.status_code == 422 and wrong.json["error"]["code"] == "wrong_password"
    rows = audit(engine, "login failure")
    assert len(rows) == guard.PASSWORD_CHECK_LIMIT - 1
    assert rows[0].target == "ops" and rows[0].client_ip == HOME
    assert details(rows[0])["reason"] == "wrong_current_password"
    assert "guess" not in str(details(rows[0])), "the guessed password is never recorded"
    seen = login_failure_events(engine)
    assert [(e.address, e.path, e.detail) for e in seen] == [(HOME, "/account/password", "ops")] * (
        guard.PASSWORD_CHECK_LIMIT - 1
    )

    last = change(thief, "the final guess")
    assert last.status_code == 401 and last.json["error"]["code"] == "session_ended"
    assert last.cookies[COOKIE_NAME].value == "" or last.cookies[COOKIE_NAME].max_age == 0
    assert thief.request("GET", "/auth/session", remote_addr=HOME).status_code == 401
    with engine.connect() as conn:
        ended = conn.execute(select(admin_sessions.c.ended_reason)).scalar_one()
    assert ended == guard.ENDED_PASSWORD_GUESSING
    assert change(thief, PASSWORD).status_code == 401, "the ended session cannot change it"
    station.sign_in("ops", remote_addr=HOME)  # the owner still signs in


def test_current_password_guesses_feed_the_brute_force_detector(
    station: Station, engine: Engine
) -> None:
    station.add_user("ops", "operator")
    thief = station.sign_in("ops", remote_addr=HOME)
    for attempt in range(guard.PASSWORD_CHECK_LIMIT - 1):
        change(thief, f"guess number {attempt:04d}")
    station.client.simulate_post(
        "/auth/login", json={"username": "x", "password": "y" * 12}, remote_addr=HOME
    )
    with engine.connect() as conn:
        query = select(security_events.c.address).where(security_events.c.kind == "login_failure")
        assert list(conn.execute(query).scalars()) == [HOME] * guard.PASSWORD_CHECK_LIMIT


# --- finding 5: per-address rate limit and per-account session cap ----------------------------


def test_sign_in_rate_limit_answers_429_before_checking_the_password(
    station: Station, engine: Engine
) -> None:
    station.add_user("ops", "operator")
    for _ in range(guard.SIGN_IN_RATE_LIMIT - 1):
        assert login(station, NEWCOMER, "not the password").status_code == 401
    assert login(station, NEWCOMER, PASSWORD).status_code == 200
    refused = login(station, NEWCOMER, PASSWORD)
    assert refused.status_code == 429
    assert refused.json["error"]["code"] == "too_many_sign_ins"
    assert 1 <= int(refused.headers["retry-after"]) <= guard.SIGN_IN_RATE_WINDOW
    assert COOKIE_NAME not in refused.cookies
    failures = len(audit(engine, "login failure"))
    assert login(station, NEWCOMER, "still wrong").status_code == 429
    assert len(audit(engine, "login failure")) == failures, "refused before any check"
    assert login(station, HOME, PASSWORD).status_code == 200, "other addresses go on"
    form = station.client.simulate_post(
        "/auth/login",
        body="username=ops&password=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        remote_addr=NEWCOMER,
    )
    assert form.status_code == 429 and 'role="alert"' in form.text
    station.clock.advance(seconds=guard.SIGN_IN_RATE_WINDOW + 1)
    assert login(station, NEWCOMER, PASSWORD).status_code == 200


def test_rate_limit_counts_a_sliding_window() -> None:
    from datetime import UTC, datetime, timedelta

    limit = guard.SignInRateLimit(limit=3, window=60)
    start = datetime(2030, 1, 1, tzinfo=UTC)
    assert [limit.attempt("192.0.2.1", start + timedelta(seconds=s)) for s in (0, 10, 20)] == [
        0,
        0,
        0,
    ]
    assert limit.attempt("192.0.2.1", start + timedelta(seconds=30)) == 30
    assert limit.attempt("192.0.2.1", start + timedelta(seconds=60)) == 0, "the first left"
    assert limit.attempt("127.0.0.1", start) == 0 and limit.attempt("::1", start) == 0


def test_session_cap_ends_the_oldest_sessions(station: Station, engine: Engine) -> None:
    station.add_user("ops", "operator")
    signed = []
    for _ in range(guard.SESSION_CAP + 2):
        signed.append(station.sign_in("ops"))
        station.clock.advance(seconds=1)
    assert [s.request("GET", "/auth/session").status_code for s in signed] == [401, 401] + [
        200
    ] * guard.SESSION_CAP
    with engine.connect() as conn:
        query = select(admin_sessions.c.ended_reason).order_by(admin_sessions.c.id)
        reasons = list(conn.execute(query).scalars())
    assert reasons == [guard.ENDED_SESSION_CAP] * 2 + [None] * guard.SESSION_CAP
    successes = audit(engine, "login success")
    assert "ended_sessions" not in details(successes[guard.SESSION_CAP - 1])
    assert len(details(successes[guard.SESSION_CAP])["ended_sessions"]) == 1


# --- finding 14: per-account guess limit -------------------------------------------------------


def test_forty_guesses_from_five_addresses_lock_the_account_for_new_addresses_only(
    station: Station, engine: Engine
) -> None:
    station.add_user("ops", "operator")
    station.sign_in("ops", remote_addr=HOME)  # HOME becomes a known address
    answers = []
    for round_ in range(8):  # 40 wrong passwords, 8 per address: under every per-address limit
        for address in ATTACKERS:
            answers.append(login(station, address, f"guess {round_} {address}").status_code)
    assert answers[: guard.ACCOUNT_LOCK_FAILURES] == [401] * guard.ACCOUNT_LOCK_FAILURES
    assert set(answers[guard.ACCOUNT_LOCK_FAILURES :]) == {429}, "guessing stops"

    locked = login(station, NEWCOMER, PASSWORD)
    assert locked.status_code == 429, "even the right password from a new address"
    assert locked.json["error"]["code"] == "account_locked"
    assert int(locked.headers["retry-after"]) > 0
    assert COOKIE_NAME not in locked.cookies
    assert details(audit(engine, "login failure")[-1])["reason"] == "account_locked"
    # The lock cannot be turned against the owner: a known address still signs in.
    assert login(station, HOME, PASSWORD).status_code == 200
    # Other accounts are not affected.
    station.add_user("other", "viewer")
    assert login(station, "192.0.2.100", PASSWORD, username="other").status_code == 200
    # Once the failures are older than the window, new addresses may try again.
    station.clock.advance(seconds=guard.ACCOUNT_LOCK_WINDOW.total_seconds() + 1)
    assert login(station, NEWCOMER, PASSWORD).status_code == 200


def test_the_lock_does_not_tell_which_accounts_exist(station: Station) -> None:
    for index in range(guard.ACCOUNT_LOCK_FAILURES):
        login(station, ATTACKERS[index % 5], "wrong password here", username="ghost")
    answer = login(station, NEWCOMER, "wrong password here", username="ghost")
    assert answer.status_code == 429 and answer.json["error"]["code"] == "account_locked"


# --- bounded password checks and the global flood limit ---------------------------------------


def _until_taken(verifier: guard.Verifier, count: int) -> None:
    """Wait (generously) until ``count`` slots of ``verifier`` are taken."""
    for _ in range(1200):
        if verifier.slots_taken() == count:
            return
        threading.Event().wait(0.05)
    assert verifier.slots_taken() == count


def _hold(verifier: guard.Verifier, count: int) -> threading.Event:
    """Take ``count`` slots of ``verifier`` with checks that wait for the returned event."""
    release = threading.Event()
    for _ in range(count):
        threading.Thread(target=verifier.run, args=(release.wait,), daemon=True).start()
    _until_taken(verifier, count)
    return release


def test_busy_password_checks_answer_429_while_public_and_signed_in_requests_go_on(
    station: Station, monkeypatch: pytest.MonkeyPatch
) -> None:
    station.add_user("ops", "operator")
    owner = station.sign_in("ops", remote_addr=HOME)
    verifier = guard.Verifier(concurrency=1, queue=1, max_wait=600)
    monkeypatch.setattr(guard, "VERIFIER", verifier)
    release = _hold(verifier, 2)  # one check running, one waiting: every slot taken
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            sign_ins = [pool.submit(login, station, f"203.0.113.{n}", PASSWORD) for n in range(4)]
            public = pool.submit(station.client.simulate_get, "/api/broadcast/state")
            signed_in = pool.submit(owner.request, "GET", "/auth/session", remote_addr=HOME)
            for done in sign_ins:
                answer = done.result()
                assert answer.status_code == 429
                assert answer.json["error"]["code"] == "sign_in_busy"
                assert int(answer.headers["retry-after"]) >= 1
            assert public.result().status_code == 200
            assert signed_in.result().status_code == 200
        changed = change(owner, PASSWORD)
        assert changed.status_code == 429 and changed.json["error"]["code"] == "sign_in_busy"
    finally:
        release.set()
    _until_taken(verifier, 0)  # the held checks gave their slots back
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda n: login(station, f"192.0.2.{n}", PASSWORD), range(6)))
    assert {a.status_code for a in answers} <= {200, 429}
    assert any(a.status_code == 200 for a in answers)
    assert all("retry-after" in a.headers for a in answers if a.status_code == 429)


def test_a_check_that_waits_too_long_for_its_turn_is_refused_and_never_runs() -> None:
    verifier = guard.Verifier(concurrency=1, queue=1, max_wait=0.05)
    release = _hold(verifier, 1)
    ran: list[int] = []
    try:
        with pytest.raises(guard.VerifierBusy) as busy:
            verifier.run(ran.append, 1)
        assert busy.value.retry_after >= 1
    finally:
        release.set()
    _until_taken(verifier, 0)
    assert verifier.run(ran.append, 2) is None
    assert ran == [2], "the refused check gave its turn up"


def test_a_global_flood_of_failed_sign_ins_closes_sign_in_but_to_allowlisted_addresses(
    station: Station, engine: Engine
) -> None:
    station.add_user("ops", "operator")
    now = station.clock()
    with begin_write(engine) as conn:
        for n in range(guard.GLOBAL_FAILED_SIGN_INS):
            record_event(conn, address=f"203.0.{n // 250}.{n % 250}", kind="login_failure", now=now)
    refused = login(station, NEWCOMER, PASSWORD)
    assert refused.status_code == 429 and refused.json["error"]["code"] == "sign_in_paused"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert login(station, "127.0.0.1", PASSWORD).status_code == 200, "loopback goes on"
    with begin_write(engine) as conn:
        entry = NewFilter(value=HOME, kind=ALLOWLIST)
        create_filter(conn, entry, now=now, requester_ip=HOME)
    assert login(station, HOME, PASSWORD).status_code == 200, "allowlisted addresses go on"
    with begin_write(engine) as conn:
        conn.execute(delete(ip_filters))
        bump_generation(conn, BANS_GENERATION)
    station.clock.advance(seconds=61)
    assert login(station, NEWCOMER, PASSWORD).status_code == 200, "the flood is over"
