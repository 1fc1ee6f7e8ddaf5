"""Identity from the session cookie, and CSRF protection for cookie-authenticated changes."""

from __future__ import annotations

import hmac
import logging
from typing import Any

import falcon

from alertstation.auth import sessions
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Forbidden
from alertstation.http.routing import STATE_CHANGING

log = logging.getLogger("alertstation.auth")

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
# Signing in needs no CSRF token: it authenticates afresh with the credentials themselves.
CSRF_EXEMPT = frozenset({("POST", "/auth/login")})


class SessionMiddleware:
    """Put the signed-in user on ``req.context.user``; keep the session row's state honest."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.session = None
        if "HTTP_COOKIE" not in req.env or req.path.startswith("/static/"):
            return  # no cookie at all (most API callers): no session to look up
        settings = self._station.settings
        token = sessions.token_from_cookie(settings.secret_key, _cookie(req))
        if token is None:
            return
        now = self._station.clock()
        lifetime = self._station.session_lifetime
        with self._station.engine.connect() as conn:
            found = sessions.look_up_session(
                conn, token, now=now, lifetime=lifetime, secret_key=settings.secret_key
            )
        if found.end_reason and found.session_id is not None:
            with begin_write(self._station.engine) as conn:
                sessions.end_session(conn, found.session_id, reason=found.end_reason, now=now)
        if found.heartbeat_due and found.session_id is not None:
            with begin_write(self._station.engine) as conn:
                if sessions.heartbeat(conn, found.session_id, now=now):
                    swept = sessions.sweep_idle_sessions(conn, now=now, lifetime=lifetime)
                    if swept:
                        log.info("ended idle sessions", extra={"count": swept})
        if found.session is not None:
            req.context.session = found.session
            req.context.user = found.session.user

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        session = getattr(req.context, "session", None)
        if session is None or req.method not in STATE_CHANGING:
            return
        if (req.method, req.uri_template) in CSRF_EXEMPT:
            return
        sent = req.get_header(CSRF_HEADER) or _form_field(req, CSRF_FIELD)
        if not sent or not hmac.compare_digest(sent, session.csrf_token):
            raise Forbidden(
                "The form is out of date or was not sent by this station; reload and try again.",
                code="csrf_failed",
            )


def _cookie(req: falcon.Request) -> str | None:
    values = req.get_cookie_values(sessions.COOKIE_NAME)
    return values[0] if values else None


def _form_field(req: falcon.Request, name: str) -> str | None:
    """Read one field of an urlencoded form body (Falcon caches the parsed form)."""
    if req.content_type is None or not req.content_type.startswith(falcon.MEDIA_URLENCODED):
        return None
    form = req.get_media(default_when_empty={})
    value = form.get(name) if isinstance(form, dict) else None
    return value if isinstance(value, str) else None


def set_session_cookie(
    req: falcon.Request, resp: falcon.Response, value: str, max_age_seconds: int
) -> None:
    """Send the session cookie: HttpOnly, SameSite=Lax, Secure when the client used https."""
    resp.set_cookie(
        sessions.COOKIE_NAME,
        value,
        max_age=max_age_seconds,
        path="/",
        secure=getattr(req.context, "scheme", req.scheme) == "https",
        http_only=True,
        same_site="Lax",
    )


def clear_session_cookie(req: falcon.Request, resp: falcon.Response) -> None:
    """Tell the browser to forget the session cookie."""
    resp.unset_cookie(sessions.COOKIE_NAME, path="/", same_site="Lax")
