"""Sign-in, sign-out, own account, user management and session management resources."""

from __future__ import annotations

from urllib.parse import urlsplit

import falcon

from alertstation.audit.actor import Actor
from alertstation.auth import guard, service, sessions
from alertstation.auth.middleware import clear_session_cookie, set_session_cookie
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Forbidden, Invalid, NotFound, TooManyRequests, Unauthorized
from alertstation.http.bodies import form_or_json, json_object, optional_bool, string_field
from alertstation.http.permissions import ROLES
from alertstation.security.autoban import detectors as autoban
from alertstation.security.bans.service import require_login_allowed

LOGIN_FAILED = "Unknown username or wrong password, or the account is disabled."
TOO_MANY_SIGN_INS = "Too many sign-in attempts from your address; wait a moment and try again."
SIGN_IN_BUSY = "Too many sign-ins are being checked right now; wait a moment and try again."
SIGN_IN_FLOOD = (
    "Sign-in is paused for a moment: too many failed sign-ins reached the station. "
    "Wait and try again."
)
ACCOUNT_LOCKED = (
    "Too many failed sign-ins to this account; sign in from an address you used before, "
    "or wait and try again."
)


def safe_next(target: str | None) -> str:
    """Return a local path to go to after sign-in; anything pointing off-site becomes '/'."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return "/"
    return target


class LoginPage:
    """GET /login: the sign-in form."""

    def __init__(self, station: Station) -> None:
        self._templates = station.templates

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        next_path = safe_next(req.get_param("next"))
        if getattr(req.context, "user", None) is not None:
            raise falcon.HTTPSeeOther(next_path)
        self._templates.page(req, resp, "login.html", next=next_path, error="", username="")


class Login:
    """POST /auth/login: JSON or form sign-in; starts a session and sets its cookie.

    Refused with 429 before the password is checked: more than ``guard.SIGN_IN_RATE_LIMIT``
    attempts from one address within a minute, a flood of failed sign-ins from all addresses
    (``guard.global_sign_in_flood``), an account locked for unknown addresses
    (``guard.account_lock``), or every password-check slot taken (``guard.VERIFIER``).
    A sign-in past ``guard.SESSION_CAP`` open sessions ends the oldest.
    """

    def __init__(self, station: Station) -> None:
        self._station = station
        self.rate_limit = guard.SignInRateLimit()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        now = station.clock()
        body, as_json = form_or_json(req)
        # The address limit comes first: a flood answered 429 costs no query and no argon2.
        wait = self.rate_limit.attempt(req.context.client_ip, now)
        if wait:
            self._refuse(req, resp, body, as_json, "too_many_sign_ins", TOO_MANY_SIGN_INS, wait)
            return
        username = body.get("username") if isinstance(body.get("username"), str) else ""
        password = body.get("password") if isinstance(body.get("password"), str) else ""
        username, password = username.strip()[:64], password[:1024]
        actor = Actor.from_request(req)
        require_login_allowed(station.engine, station.ledger, actor, username, now)
        with station.engine.connect() as conn:
            flood = guard.global_sign_in_flood(conn, req.context.client_ip, now)
            lock = None if flood else guard.account_lock(conn, username, req.context.client_ip, now)
        if flood:
            self._refuse(req, resp, body, as_json, "sign_in_paused", SIGN_IN_FLOOD, flood)
            return
        if lock is not None:
            self._failed(req, username, reason="account_locked")
            self._refuse(
                req, resp, body, as_json, "account_locked", ACCOUNT_LOCKED, lock.retry_after
            )
            return
        user = None
        if username and password:
            try:
                user = guard.VERIFIER.run(_authenticate, station, username, password)
            except guard.VerifierBusy as busy:
                self._refuse(
                    req, resp, body, as_json, "sign_in_busy", SIGN_IN_BUSY, busy.retry_after
                )
                return
        if user is None:
            self._failed(req, username)
            if as_json:
                raise Unauthorized(LOGIN_FAILED, code="invalid_credentials")
            resp.status = falcon.HTTP_401
            self._page(req, resp, body, username, LOGIN_FAILED)
            return
        with begin_write(station.engine) as conn:
            cookie, session = sessions.start_session(
                conn,
                user,
                source_ip=req.context.client_ip,
                user_agent=req.get_header("User-Agent"),
                now=now,
                secret_key=station.settings.secret_key,
            )
            capped = guard.cap_sessions(conn, user.id, now)
            service.record_login(conn, user.id, now)
            signed_in = Actor(
                user_id=user.id,
                username=user.username,
                client_ip=actor.client_ip,
                user_agent=actor.user_agent,
            )
            details: dict[str, object] = {"session_id": session.id}
            if capped:
                details["ended_sessions"] = capped
            station.ledger.record(
                conn, signed_in, "login success", target=user.username, details=details
            )
        set_session_cookie(req, resp, cookie, int(station.session_lifetime.total_seconds()))
        if as_json:
            resp.media = {"user": user.as_dict(), "csrf_token": session.csrf_token}
        else:
            raise falcon.HTTPSeeOther(safe_next(body.get("next")))

    def _failed(self, req: falcon.Request, username: str, reason: str | None = None) -> None:
        """Write the ``login failure`` audit row and count it (may raise 403 ``banned``)."""
        station = self._station
        details = {"username": username}
        if reason:
            details["reason"] = reason
        station.ledger.record_now(
            station.engine,
            Actor.from_request(req),
            "login failure",
            target=username or None,
            details=details,
        )
        autoban.login_failed(station, req, username)

    def _refuse(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        body: dict,  # type: ignore[type-arg]
        as_json: bool,
        code: str,
        message: str,
        retry_after: int,
    ) -> None:
        """Answer 429 with Retry-After: the JSON error envelope, or the form with the message."""
        resp.status = falcon.HTTP_429
        resp.set_header("Retry-After", str(retry_after))
        if as_json:
            resp.media = {
                "error": {"code": code, "message": message, "details": {"retry_after": retry_after}}
            }
            return
        username = body.get("username") if isinstance(body.get("username"), str) else ""
        self._page(req, resp, body, username.strip()[:64], message)

    def _page(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        body: dict,  # type: ignore[type-arg]
        username: str,
        error: str,
    ) -> None:
        self._station.templates.page(
            req,
            resp,
            "login.html",
            next=safe_next(body.get("next")),
            error=error,
            username=username,
        )


def _authenticate(station: Station, username: str, password: str) -> service.User | None:
    with station.engine.connect() as conn:
        return service.authenticate(conn, username, password)


def _check_own_password(station: Station, user_id: int, password: str) -> bool:
    with station.engine.connect() as conn:
        return service.check_own_password(conn, user_id, password)


class Logout:
    """POST /auth/logout: end this session and forget the cookie."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = req.context.session
        if session is not None:
            with begin_write(self._station.engine) as conn:
                sessions.end_session(
                    conn, session.id, reason=sessions.ENDED_LOGOUT, now=self._station.clock()
                )
        clear_session_cookie(req, resp)
        if req.content_type and req.content_type.startswith(falcon.MEDIA_URLENCODED):
            raise falcon.HTTPSeeOther("/login")
        resp.media = {"signed_out": True}


class CurrentSession:
    """GET /auth/session: who is signed in, and the CSRF token (or the API token) in use."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = req.context.session
        user = req.context.user
        token = getattr(req.context, "token", None)
        resp.media = {
            "user": user.as_dict() if hasattr(user, "as_dict") else {"username": user.username},
            "csrf_token": session.csrf_token if session else None,
            "token": (
                {"id": token.id, "name": token.name, "scopes": sorted(token.scopes)}
                if token is not None
                else None
            ),
        }


class AccountPage:
    """GET /account: the signed-in user's own page."""

    def __init__(self, station: Station) -> None:
        self._templates = station.templates

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._templates.page(req, resp, "account.html")


class OwnPassword:
    """POST /account/password: change one's own password; other sessions are signed out.

    A wrong current password counts as a failed sign-in: a ``login failure`` audit row (reason
    ``wrong_current_password``), a ``login_failure`` security event for the brute-force detector
    and the account lock, and after ``guard.PASSWORD_CHECK_LIMIT`` failures within
    ``guard.PASSWORD_CHECK_WINDOW`` this session is ended (401 ``session_ended``).
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        user = req.context.user
        if user.role == "demo":
            raise Forbidden("Demo accounts cannot change their password.")
        body = json_object(req)
        current = string_field(body, "current_password")
        new = string_field(body, "new_password")
        station = self._station
        session = req.context.session
        try:
            correct = guard.VERIFIER.run(_check_own_password, station, user.id, current)
        except guard.VerifierBusy as busy:
            raise TooManyRequests(
                SIGN_IN_BUSY, code="sign_in_busy", retry_after=busy.retry_after
            ) from None
        if not correct:
            with station.engine.connect() as conn:
                problem = service.password_problem(conn, new, user.username, "new_password")
            self._wrong_password(req, resp, user.username, session, new_problem=problem)
        with begin_write(station.engine) as conn:
            service.change_own_password(conn, user.id, current, new)
            ended = sessions.end_sessions(
                conn,
                reason=sessions.ENDED_PASSWORD_CHANGED,
                now=station.clock(),
                user_id=user.id,
                keep_session_id=session.id if session else None,
            )
            station.ledger.record_config_update(
                conn, Actor.from_request(req), f"user:{user.username}", ["password"]
            )
        resp.media = {"changed": True, "other_sessions_ended": ended}

    def _wrong_password(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        username: str,
        session: sessions.ActiveSession | None,
        *,
        new_problem: str = "",
    ) -> None:
        station = self._station
        station.ledger.record_now(
            station.engine,
            Actor.from_request(req),
            "login failure",
            target=username,
            details={
                "username": username,
                "reason": "wrong_current_password",
                "session_id": session.id if session else None,
            },
        )
        autoban.login_failed(station, req, username)
        now = station.clock()
        with station.engine.connect() as conn:
            failures = guard.password_check_failures(conn, username, now)
        if failures >= guard.PASSWORD_CHECK_LIMIT and session is not None:
            with begin_write(station.engine) as conn:
                sessions.end_session(
                    conn, session.id, reason=guard.ENDED_PASSWORD_GUESSING, now=now
                )
            clear_session_cookie(req, resp)
            raise Unauthorized(
                f"The current password was wrong {failures} times; you have been signed out.",
                code="session_ended",
            )
        wrong = "the current password is not correct"
        errors = [{"field": "current_password", "message": wrong}]
        if new_problem:  # the form shows every error at once
            errors.append({"field": "new_password", "message": new_problem})
        raise Invalid(wrong, code="wrong_password", field="current_password", errors=errors)


class UsersPage:
    """GET /admin/users: the user management page."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            accounts = service.list_users(conn)
        self._station.templates.page(req, resp, "users.html", users=accounts, roles=list(ROLES))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        with begin_write(station.engine) as conn:
            user = service.create_user(
                conn,
                username=string_field(body, "username", max_length=64),
                role=string_field(body, "role", max_length=32),
                password=string_field(body, "password"),
            )
            station.ledger.record(
                conn,
                Actor.from_request(req),
                "user.created",
                target=user.username,
                details={"role": user.role},
            )
        resp.status = falcon.HTTP_201
        resp.media = {"user": user.as_dict()}


class UsersApi:
    """GET /api/admin/users: the accounts as JSON."""

    def __init__(self, station: Station) -> None:
        self._engine = station.engine

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._engine.connect() as conn:
            resp.media = {"users": [user.as_dict() for user in service.list_users(conn)]}


class UserItem:
    """PATCH/DELETE /admin/users/{user_id}: change role, enabled flag or password; delete.

    A new ``password`` (checked against the password policy) ends the account's sessions, as
    ``alertstation user passwd`` does; the audit row names the field, never the value.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_patch(self, req: falcon.Request, resp: falcon.Response, user_id: int) -> None:
        body = json_object(req)
        unknown = sorted(set(body) - {"role", "is_active", "password"})
        if unknown:
            raise Invalid(f"unknown field(s): {', '.join(unknown)}", field=unknown[0])
        role = body.get("role")
        if role is not None and not isinstance(role, str):
            raise Invalid("role must be a string", field="role")
        is_active = optional_bool(body, "is_active")
        password = string_field(body, "password") if "password" in body else None
        station = self._station
        with begin_write(station.engine) as conn:
            before = service.get_user(conn, user_id)
            user, changed = service.update_user(conn, user_id, role=role, is_active=is_active)
            if password is not None:
                service.set_password(conn, user_id, password)
                changed = sorted([*changed, "password"])
            if is_active is False or password is not None:
                reason = (
                    sessions.ENDED_USER_DISABLED
                    if is_active is False
                    else sessions.ENDED_PASSWORD_CHANGED
                )
                own = req.context.session if user_id == req.context.user.id else None
                sessions.end_sessions(
                    conn,
                    reason=reason,
                    now=station.clock(),
                    user_id=user_id,
                    keep_session_id=own.id if own else None,
                )
            if changed:
                station.ledger.record_config_update(
                    conn,
                    Actor.from_request(req),
                    f"user:{user.username}",
                    changed,
                    before={"role": before.role, "is_active": before.is_active},
                    after={"role": user.role, "is_active": user.is_active},
                )
        resp.media = {"user": user.as_dict(), "changed": changed}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, user_id: int) -> None:
        if user_id == req.context.user.id:
            raise Invalid("you cannot delete your own account; ask another admin", code="self")
        station = self._station
        with begin_write(station.engine) as conn:
            user = service.delete_user(conn, user_id)
            station.ledger.record(
                conn, Actor.from_request(req), "user.deleted", target=user.username
            )
        resp.media = {"deleted": user.id}


class SessionsPage:
    """GET /admin/sessions: open sessions with Terminate and Terminate All Others."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        records = _sweep_and_list(self._station, include_ended=False)
        self._station.templates.page(
            req,
            resp,
            "sessions.html",
            sessions=records,
            current_id=req.context.session.id if req.context.session else None,
            lifetime_hours=self._station.settings.session_lifetime_hours,
        )


def _sweep_and_list(station: Station, *, include_ended: bool) -> list[sessions.SessionRecord]:
    with begin_write(station.engine) as conn:
        sessions.sweep_idle_sessions(conn, now=station.clock(), lifetime=station.session_lifetime)
        return sessions.list_sessions(conn, include_ended=include_ended)


class SessionsApi:
    """GET /api/admin/sessions: sweep idle rows, then list."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        include_ended = req.get_param_as_bool("include_ended") or False
        current = req.context.session.id if req.context.session else None
        records = _sweep_and_list(self._station, include_ended=include_ended)
        resp.media = {"sessions": [record.as_dict(current) for record in records]}


class SessionTerminate:
    """POST /api/admin/sessions/{session_id}/terminate."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response, session_id: int) -> None:
        station = self._station
        with begin_write(station.engine) as conn:
            if not sessions.end_session(
                conn, session_id, reason=sessions.ENDED_TERMINATED, now=station.clock()
            ):
                raise NotFound(f"no open session with id {session_id}")
            station.ledger.record(
                conn, Actor.from_request(req), "session.terminated", target=str(session_id)
            )
        resp.media = {"ended": 1}


class SessionTerminateOthers:
    """POST /api/admin/sessions/terminate-others: end every open session but the caller's."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        keep = req.context.session.id if req.context.session else None
        with begin_write(station.engine) as conn:
            ended = sessions.end_sessions(
                conn, reason=sessions.ENDED_TERMINATED, now=station.clock(), keep_session_id=keep
            )
            station.ledger.record(
                conn,
                Actor.from_request(req),
                "session.terminated_others",
                details={"ended": ended},
            )
        resp.media = {"ended": ended}
