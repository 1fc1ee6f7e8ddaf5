"""Sign-in, sign-out, own account, user management and session management resources."""

from __future__ import annotations

from urllib.parse import urlsplit

import falcon

from alertstation.audit.actor import Actor
from alertstation.auth import service, sessions
from alertstation.auth.middleware import clear_session_cookie, set_session_cookie
from alertstation.auth.permissions import ROLES
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Forbidden, Invalid, NotFound, Unauthorized
from alertstation.http.bodies import form_or_json, json_object, optional_bool, string_field
from alertstation.security import autoban
from alertstation.security.service import require_login_allowed

LOGIN_FAILED = "Unknown username or wrong password, or the account is disabled."


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
    """POST /auth/login: JSON or form sign-in; starts a session and sets its cookie."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body, as_json = form_or_json(req)
        username = body.get("username") if isinstance(body.get("username"), str) else ""
        password = body.get("password") if isinstance(body.get("password"), str) else ""
        username, password = username.strip()[:64], password[:1024]
        station = self._station
        now = station.clock()
        require_login_allowed(
            station.engine, station.ledger, Actor.from_request(req), username, now
        )
        user = None
        if username and password:
            with station.engine.connect() as conn:
                user = service.authenticate(conn, username, password)
        actor = Actor.from_request(req)
        if user is None:
            station.ledger.record_now(
                station.engine,
                actor,
                "login failure",
                target=username or None,
                details={"username": username},
            )
            autoban.login_failed(station, req, username)
            if as_json:
                raise Unauthorized(LOGIN_FAILED, code="invalid_credentials")
            resp.status = falcon.HTTP_401
            station.templates.page(
                req,
                resp,
                "login.html",
                next=safe_next(body.get("next")),
                error=LOGIN_FAILED,
                username=username,
            )
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
            service.record_login(conn, user.id, now)
            signed_in = Actor(
                user_id=user.id,
                username=user.username,
                client_ip=actor.client_ip,
                user_agent=actor.user_agent,
            )
            station.ledger.record(
                conn,
                signed_in,
                "login success",
                target=user.username,
                details={"session_id": session.id},
            )
        set_session_cookie(req, resp, cookie, int(station.session_lifetime.total_seconds()))
        if as_json:
            resp.media = {"user": user.as_dict(), "csrf_token": session.csrf_token}
        else:
            raise falcon.HTTPSeeOther(safe_next(body.get("next")))


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
    """GET /auth/session: who is signed in, and the CSRF token for API clients."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        session = req.context.session
        user = req.context.user
        resp.media = {
            "user": user.as_dict() if hasattr(user, "as_dict") else {"username": user.username},
            "csrf_token": session.csrf_token if session else None,
        }


class AccountPage:
    """GET /account: the signed-in user's own page."""

    def __init__(self, station: Station) -> None:
        self._templates = station.templates

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._templates.page(req, resp, "account.html")


class OwnPassword:
    """POST /account/password: change one's own password; other sessions are signed out."""

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
    """PATCH/DELETE /admin/users/{user_id}: change role or enabled flag; delete."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_patch(self, req: falcon.Request, resp: falcon.Response, user_id: int) -> None:
        body = json_object(req)
        unknown = set(body) - {"role", "is_active"}
        if unknown:
            raise Invalid(f"unknown field(s): {', '.join(sorted(unknown))}")
        role = body.get("role")
        if role is not None and not isinstance(role, str):
            raise Invalid("role must be a string", field="role")
        is_active = optional_bool(body, "is_active")
        station = self._station
        with begin_write(station.engine) as conn:
            user, changed = service.update_user(conn, user_id, role=role, is_active=is_active)
            if is_active is False:
                sessions.end_sessions(
                    conn, reason=sessions.ENDED_USER_DISABLED, now=station.clock(), user_id=user_id
                )
            if changed:
                station.ledger.record_config_update(
                    conn, Actor.from_request(req), f"user:{user.username}", changed
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
