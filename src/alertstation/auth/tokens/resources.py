"""API token resources: one's own tokens (JSON and page) and every token for user managers.

Every route here accepts a signed-in browser session only, never a token (the routes say
``cookie_only`` or are self-service routes), so a leaked token cannot make more tokens.
"""

from __future__ import annotations

import falcon

from alertstation.audit.actor import Actor
from alertstation.auth.tokens import service as tokens
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import FieldError, Forbidden, Invalid
from alertstation.http.bodies import json_object
from alertstation.http.permissions import PERMISSION_ACTIONS

DEMO_REFUSED = "Demo accounts cannot make API tokens."

# How the pages describe each scope.
SCOPE_LABELS = {
    "read": "Read: every page and API read open to any signed-in account",
    **{name: f"{name}: {action}" for name, action in PERMISSION_ACTIONS.items()},
    "admin": "admin: routes only an administrator may call",
}


def _prefers_json(req: falcon.Request) -> bool:
    return req.client_prefers([falcon.MEDIA_HTML, falcon.MEDIA_JSON]) == falcon.MEDIA_JSON


class OwnTokens:
    """GET/POST /api/tokens: the caller's own tokens; create one (shown once)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        user = req.context.user
        with station.engine.connect() as conn:
            rows = tokens.list_tokens(conn, user_id=user.id)
        now = station.clock()
        resp.media = {
            "tokens": [row.as_dict(now) for row in rows],
            "grantable_scopes": list(tokens.grantable_scopes(user.role)),
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        user = req.context.user
        if user.role == "demo":
            raise Forbidden(DEMO_REFUSED)
        body = json_object(req)
        unknown = set(body) - {"name", "scopes", "expires_in_days"}
        if unknown:
            raise Invalid(f"unknown field(s): {', '.join(sorted(unknown))}")
        station = self._station
        now = station.clock()
        try:
            with begin_write(station.engine) as conn:
                token, row = tokens.create_token(
                    conn,
                    user,
                    name=body.get("name"),
                    scopes=body.get("scopes"),
                    expires_in_days=body.get("expires_in_days"),
                    now=now,
                    secret_key=station.settings.secret_key,
                )
                station.ledger.record(
                    conn,
                    Actor.from_request(req),
                    "token.created",
                    target=f"token {row.name} of {row.username}",
                    details={
                        "token_id": row.id,
                        "prefix": row.prefix,
                        "scopes": list(row.scopes),
                        "expires_at": row.expires_at.isoformat() if row.expires_at else None,
                    },
                )
        except FieldError as ex:
            raise ex.as_app_error() from None
        resp.status = falcon.HTTP_201
        resp.media = {"token": token, "api_token": row.as_dict(now)}


class OwnToken:
    """DELETE /api/tokens/{token_id}: revoke one of the caller's own tokens."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_delete(self, req: falcon.Request, resp: falcon.Response, token_id: int) -> None:
        _revoke(self._station, req, resp, token_id, owner_id=req.context.user.id)


class AdminToken:
    """DELETE /api/admin/tokens/{token_id}: revoke anyone's token (user managers)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_delete(self, req: falcon.Request, resp: falcon.Response, token_id: int) -> None:
        _revoke(self._station, req, resp, token_id, owner_id=None)


def _revoke(
    station: Station,
    req: falcon.Request,
    resp: falcon.Response,
    token_id: int,
    *,
    owner_id: int | None,
) -> None:
    now = station.clock()
    with begin_write(station.engine) as conn:
        row = tokens.revoke_token(conn, token_id, now=now, user_id=owner_id)
        station.ledger.record(
            conn,
            Actor.from_request(req),
            "token.revoked",
            target=f"token {row.name} of {row.username}",
            details={"token_id": row.id, "prefix": row.prefix},
        )
    resp.media = {"revoked": row.id, "api_token": row.as_dict(now)}


class OwnTokensPage:
    """GET /account/tokens: the caller's tokens, a form to make one and Revoke buttons."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        user = req.context.user
        with station.engine.connect() as conn:
            rows = tokens.list_tokens(conn, user_id=user.id)
        grantable = tokens.grantable_scopes(user.role)
        station.templates.page(
            req,
            resp,
            "account_tokens.html",
            tokens=rows,
            now=station.clock(),
            scopes=[(name, SCOPE_LABELS[name]) for name in grantable],
            max_days=tokens.MAX_EXPIRY_DAYS,
        )


class AdminTokensPage:
    """GET /admin/tokens: every account's tokens (a page, or JSON when asked for it)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        with station.engine.connect() as conn:
            rows = tokens.list_tokens(conn)
        now = station.clock()
        if _prefers_json(req):
            resp.media = {"tokens": [row.as_dict(now) for row in rows]}
            return
        station.templates.page(req, resp, "admin_tokens.html", tokens=rows, now=now)
