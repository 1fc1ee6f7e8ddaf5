"""Render every error as the JSON envelope (or an HTML page for a browser asking for one).

The envelope is ``{"error": {"code": "...", "message": "..."}}``, with ``details`` when the error
carries any. Falcon's own errors (404 for an unknown path, 405, malformed JSON) go through the same
path, so a client never sees another shape. A database error that means the database cannot be
reached (``alertstation.db.engine.is_outage``) is answered 503 ``database_unavailable`` with
Retry-After; any other database error is a bug (500).
"""

from __future__ import annotations

import http
import logging
from typing import Any
from urllib.parse import urlencode

import falcon
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from alertstation.db.engine import is_outage
from alertstation.errors import AppError, DatabaseUnavailable
from alertstation.http.templates import Templates, page_context

log = logging.getLogger("alertstation.http")

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    411: "length_required",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    422: "invalid",
    500: "internal_error",
    503: "service_unavailable",
}


def code_for_status(status: int) -> str:
    """Return the envelope code for an HTTP status, e.g. 405 → method_not_allowed."""
    if status in _CODES:
        return _CODES[status]
    try:
        return http.HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")
    except ValueError:
        return "error"


def wants_html(req: falcon.Request) -> bool:
    """Tell whether the client is a browser asking for a page rather than an API client."""
    if req.path.startswith("/api/"):
        return False
    return req.client_prefers((falcon.MEDIA_JSON, falcon.MEDIA_HTML)) == falcon.MEDIA_HTML


class ErrorRenderer:
    """Turn exceptions into responses; registered as the app's error handlers."""

    def __init__(self, templates: Templates) -> None:
        self._templates = templates

    def render(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        status: int,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Write one error response."""
        code = code or code_for_status(status)
        resp.status = status
        if headers:
            resp.set_headers(headers)
        if wants_html(req):
            if status == 401 and req.method == "GET":
                resp.status = falcon.HTTP_303
                resp.location = "/login?" + urlencode({"next": req.relative_uri})
                return
            resp.content_type = falcon.MEDIA_HTML
            resp.text = self._templates.render(
                "error.html",
                **page_context(req),
                status=status,
                phrase=_phrase(status),
                code=code,
                message=message,
            )
            return
        body: dict[str, Any] = {"code": code, "message": message}
        if details:
            body["details"] = details
        resp.content_type = falcon.MEDIA_JSON
        resp.media = {"error": body}

    def handle_app_error(
        self, req: falcon.Request, resp: falcon.Response, ex: AppError, params: dict[str, Any]
    ) -> None:
        """Render a service error."""
        retry_after = getattr(ex, "retry_after", None)
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        self.render(
            req,
            resp,
            ex.status,
            ex.message,
            code=ex.code,
            details=ex.details or None,
            headers=headers,
        )

    def handle_database_error(
        self, req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any
    ) -> None:
        """Answer 503 ``database_unavailable`` for an outage; anything else is a bug (500)."""
        if not is_outage(ex):
            self.handle_unexpected(req, resp, ex, params)
            return
        log.warning(
            "database unavailable on %s %s: %s", req.method, req.path, ex.__class__.__name__
        )
        unavailable = DatabaseUnavailable(
            "The database cannot be reached right now; try again shortly."
        )
        self.handle_app_error(req, resp, unavailable, params)

    def handle_http_error(
        self, req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError, params: Any
    ) -> None:
        """Render one of Falcon's own errors (unknown route, wrong method, bad JSON ...)."""
        status = ex.status_code
        message = ex.description or _default_message(req, status)
        self.render(req, resp, status, message, headers=dict(ex.headers or {}))

    def handle_unexpected(
        self, req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any
    ) -> None:
        """Log a bug with its traceback and answer 500 without leaking internals."""
        log.exception("unhandled error on %s %s", req.method, req.path)
        request_id = getattr(req.context, "request_id", "unknown")
        self.render(req, resp, 500, f"An internal error occurred (request {request_id}).")


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _default_message(req: falcon.Request, status: int) -> str:
    if status == 404:
        return f"Nothing is served at {req.path}."
    if status == 405:
        return f"{req.method} is not allowed on {req.path}."
    return _phrase(status) + "."


def install_error_handlers(app: falcon.App, renderer: ErrorRenderer) -> None:
    """Register the renderer for every exception class the app can raise."""
    app.add_error_handler(Exception, renderer.handle_unexpected)
    app.add_error_handler(falcon.HTTPError, renderer.handle_http_error)
    app.add_error_handler(AppError, renderer.handle_app_error)
    app.add_error_handler(DBAPIError, renderer.handle_database_error)
    app.add_error_handler(PoolTimeout, renderer.handle_database_error)
