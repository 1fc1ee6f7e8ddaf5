"""Identity from an API token or the session cookie; CSRF protection for cookie sessions.

A request with an ``Authorization`` header is authenticated by its bearer token alone: its
cookies are ignored, and CSRF does not apply (a browser never sends the header on its own).
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

import falcon

from alertstation.auth import guard, sessions
from alertstation.auth.tokens import service as tokens
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Forbidden, TooManyRequests, Unauthorized
from alertstation.http.routing import STATE_CHANGING
from alertstation.security.autoban import detectors as autoban
from alertstation.security.bans.service import LOGIN_NOT_ALLOWED, login_allowed

log = logging.getLogger("alertstation.auth")

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
# Signing in needs no CSRF token: it authenticates afresh with the credentials themselves.
CSRF_EXEMPT = frozenset({("POST", "/auth/login")})

TOKEN_REFUSED = "The API token is unknown, expired or revoked."
TOKEN_OWNER_DISABLED = "The API token's account is disabled."
TOKEN_NOT_ALLOWED = "API tokens are limited to allowlisted addresses, and yours is not one of them."
TOKEN_RATE_LIMITED = "Too many requests with this API token; wait and try again."
# What the brute-force detector and the Security Center record as the attempted account of a
# refused token (a space keeps it apart from every real username).
FAILED_TOKEN_DETAIL = "api token"


class SessionMiddleware:
    """Put the signed-in user on ``req.context.user``; keep the session row's state honest."""

    def __init__(self, station: Station) -> None:
        self._station = station
        self.token_rate_limit = guard.SignInRateLimit(
            tokens.RATE_LIMIT, tokens.RATE_WINDOW, exempt_loopback=False
        )

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.session = None
        req.context.token = None
        if "HTTP_AUTHORIZATION" in req.env and not req.path.startswith("/static/"):
            self._authenticate_token(req, req.env["HTTP_AUTHORIZATION"])
            return  # the token alone: cookies are not read
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

    def _authenticate_token(self, req: falcon.Request, header: str) -> None:
        """Put a token's owner on the request, or refuse it (401, 403 or 429).

        The allowlist is asked first, as sign-in does, so an address outside it learns
        nothing about tokens. An unknown, expired or revoked token counts as a failed sign-in
        for the brute-force detector (which may answer 403 ``banned`` instead).
        """
        station = self._station
        now = station.clock()
        address = req.context.client_ip
        presented = tokens.bearer_token(header)
        with station.engine.connect() as conn:
            allowed = login_allowed(conn, address, now)
            found = (
                tokens.look_up(conn, presented, now=now, secret_key=station.settings.secret_key)
                if allowed and presented is not None
                else None
            )
        if not allowed:
            raise Forbidden(TOKEN_NOT_ALLOWED, code=LOGIN_NOT_ALLOWED)
        token = found.token if found is not None else None
        if token is None:
            failure = found.failure if found is not None else tokens.UNKNOWN
            if failure == tokens.OWNER_DISABLED:
                raise Unauthorized(TOKEN_OWNER_DISABLED, code="invalid_token")
            log.warning("refused an API token (%s) from %s", failure, address)
            autoban.login_failed(station, req, FAILED_TOKEN_DETAIL)
            raise Unauthorized(TOKEN_REFUSED, code="invalid_token")
        wait = self.token_rate_limit.attempt(str(token.id), now)
        if wait:
            raise TooManyRequests(TOKEN_RATE_LIMITED, code="token_rate_limited", retry_after=wait)
        if found is not None and found.last_used_due:
            with begin_write(station.engine) as conn:
                tokens.mark_used(conn, token.id, now=now, address=address)
        req.context.token = token
        req.context.user = token.user
        req.context.actor_name = token.actor_name

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
