"""Middleware that every request passes through, in the order ``create_app`` installs them.

1. RequestContext: request id, client address (one trusted proxy hop), request-target and body
   size limits, security headers, the access log line, and an unread body dropped (or the
   connection closed) once the answer is ready.
2. Authorization: looks the matched route up in the registry and applies its access rule (HEAD
   takes the rule of GET), then reads a chunked body within the route's limit.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
from collections.abc import Iterable
from typing import Any

import falcon

from alertstation.errors import Forbidden, PayloadTooLarge, Unauthorized, UriTooLong
from alertstation.http.access_line import access_fields, access_line, duration_hundredths
from alertstation.http.client_address import IPNetwork, TrustedProxies
from alertstation.http.connection import buffer_chunked_body, finish_unread_body
from alertstation.http.permissions import READ_ONLY_ROLES, read_only_denial
from alertstation.http.routing import SELF_SERVICE_ROUTES, STATE_CHANGING, Route, RouteRegistry
from alertstation.logs import ACCESS_LOGGER, access_line_writer, request_id_var

access_log = logging.getLogger(ACCESS_LOGGER)

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
_STATIC_PREFIX = "/static/"
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
_SECURITY_HEADER_ITEMS = tuple(_SECURITY_HEADERS.items())  # set in one call on every answer
# The longest request target (path and query string) the app answers; gunicorn's own request-line
# limit is set above it (``alertstation.server``) so an over-long target gets the JSON envelope.
MAX_TARGET_CHARS = 4096
_PAGE_CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'self'"
_PAGE_HEADER_ITEMS = (("Content-Security-Policy", _PAGE_CSP), ("Cache-Control", "no-store"))


class RequestContextMiddleware:
    """Give each request its id, client address and scheme; log it when it is answered."""

    def __init__(self, trusted_proxies: Iterable[IPNetwork], max_request_bytes: int) -> None:
        self._proxies = TrustedProxies(trusted_proxies)
        self._max_request_bytes = max_request_bytes
        self._id_prefix = os.urandom(8).hex()
        self._id_counter = itertools.count()

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        context = req.context
        context.started = time.perf_counter()
        env = req.env
        # Headers straight from the WSGI environ (what ``req.get_header`` reads), each once.
        # The peer is parsed once per distinct peer string (remembered), not once per question.
        origin = self._proxies.origin(
            req.remote_addr,
            env.get("HTTP_X_FORWARDED_FOR"),
            env.get("HTTP_X_FORWARDED_PROTO"),
            req.scheme,
        )
        context.client_ip = origin.client_ip
        context.scheme = origin.scheme
        incoming = env.get("HTTP_X_REQUEST_ID")
        if incoming and origin.from_proxy and _REQUEST_ID.match(incoming):
            request_id = incoming
        else:
            # 32 hex digits, as uuid4().hex was: this app's random prefix and a counter, unique
            # without a system call per request.
            request_id = f"{self._id_prefix}{next(self._id_counter):016x}"
        context.request_id = request_id
        context.request_id_token = request_id_var.set(request_id)
        context.user = None
        target = req.relative_uri
        if len(target) > MAX_TARGET_CHARS:
            raise UriTooLong(
                f"The request target is {len(target)} characters; the limit is {MAX_TARGET_CHARS}."
            )
        if env.get("CONTENT_LENGTH"):  # no body announced: nothing to check
            length = req.content_length
            if length is not None and length > self._max_request_bytes:
                raise PayloadTooLarge(
                    f"Request body of {length} bytes is over the "
                    f"{self._max_request_bytes}-byte limit."
                )

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        finish_unread_body(req)
        context = req.context
        request_id = getattr(context, "request_id", None)
        if request_id:
            resp.set_header("X-Request-ID", request_id)
        resp.set_headers(_SECURITY_HEADER_ITEMS)
        if req.path.startswith(_STATIC_PREFIX):
            versioned = req.get_param("v") is not None and resp.status_code == 200
            cache = "public, max-age=31536000, immutable" if versioned else "no-cache"
            resp.set_header("Cache-Control", cache)
        else:
            content_type = resp.content_type
            if content_type and content_type.startswith(falcon.MEDIA_HTML):
                resp.set_headers(_PAGE_HEADER_ITEMS)
        if access_log.isEnabledFor(logging.INFO):
            _log_access(req, resp)
        token = getattr(context, "request_id_token", None)
        if token is not None:
            request_id_var.reset(token)


def _log_access(req: falcon.Request, resp: falcon.Response) -> None:
    """Log the request's access line: method, path, status, duration, client and user.

    When the station's JSON background writer is the only handler, the line is built directly
    (the same JSON as the formatter's, without a log record: ``access_line``) and queued for the
    writer.
    """
    context = req.context
    started = getattr(context, "started", None)
    # Milliseconds to two decimals, counted in hundredths (-1: no start was recorded).
    hundredths = duration_hundredths(time.perf_counter() - started if started else None)
    method, path, status = req.method, req.path, resp.status_code
    client_ip = getattr(context, "client_ip", None)
    user = getattr(getattr(context, "user", None), "username", None)
    writer = access_line_writer(access_log, logging.INFO)
    if writer is not None:
        request_id = getattr(context, "request_id", None)
        now = time.time()
        writer.put_line(
            access_line(now, request_id, method, path, status, hundredths, client_ip, user)
        )
        return
    fields = access_fields(method, path, status, hundredths, client_ip, user)
    access_log.info("%s %s %s", method, path, status, extra=fields)


class AuthorizationMiddleware:
    """Apply the registry's access rule to every routed request; no entry means deny.

    Once access is granted it also holds the body to the route's own size limit (uploads may
    allow more than the station-wide limit the request context checked first).
    """

    def __init__(self, registry: RouteRegistry, default_max_body: int) -> None:
        self._registry = registry
        self._default_max_body = default_max_body

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        route = self._registry.lookup(req.uri_template, req.method)
        if route is None:
            if req.method == "OPTIONS":
                return  # Falcon's default answer: an Allow header, nothing else
            raise falcon.HTTPMethodNotAllowed(self._registry.methods_for(req.uri_template or ""))
        req.context.route = route
        user = getattr(req.context, "user", None)
        if route.access.kind == "public":
            self._check_body_size(req, route.max_body or self._default_max_body)
            return
        if user is None:
            raise Unauthorized("Sign in to continue.")
        token = getattr(req.context, "token", None)
        if token is not None:
            _check_token(token, route, req.method)
        self_service = (req.method, route.path) in SELF_SERVICE_ROUTES
        if req.method in STATE_CHANGING and user.role in READ_ONLY_ROLES and not self_service:
            raise Forbidden(read_only_denial(user.role))
        if not route.access.allows(user):
            raise Forbidden(route.access.denial())
        self._check_body_size(req, route.max_body or self._default_max_body)

    @staticmethod
    def _check_body_size(req: falcon.Request, limit: int) -> None:
        env = req.env
        if not env.get("CONTENT_LENGTH") and "HTTP_TRANSFER_ENCODING" not in env:
            return  # no body announced (most requests): nothing to hold to the limit
        length = req.content_length
        if length is not None and length > limit:
            raise PayloadTooLarge(f"Request body of {length} bytes is over the {limit}-byte limit.")
        buffer_chunked_body(req, limit)


TOKEN_NOT_ACCEPTED = "This route takes a signed-in browser session, never an API token."
TOKEN_SCOPE_DENIED = "The API token's scopes do not cover this route."


def _check_token(token: Any, route: Route, method: str) -> None:
    """Refuse a request made with an API token that its route or its scopes do not allow.

    ``token.scopes`` is a frozenset of scope names; the owner's own rights are checked after
    this, as for a session, so the token gets the intersection of both.
    """
    if not route.accepts_token:
        raise Forbidden(TOKEN_NOT_ACCEPTED, code="token_not_accepted")
    if not route.access.covered_by(method, token.scopes):
        raise Forbidden(TOKEN_SCOPE_DENIED, code="token_scope")
