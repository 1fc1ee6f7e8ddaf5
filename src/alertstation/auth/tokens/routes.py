"""Routes of API tokens: every one takes a browser session only, never a token."""

from alertstation.auth.tokens import resources as r
from alertstation.context import Station
from alertstation.http.routing import SIGNED_IN, Route, permission

MANAGE_USERS = permission("system.manage_users")


def routes(station: Station) -> list[Route]:
    """Return the token routes."""
    own = r.OwnTokens(station)
    return [
        Route("GET", "/api/tokens", own, SIGNED_IN, summary="Own API tokens", cookie_only=True),
        Route("POST", "/api/tokens", own, SIGNED_IN, summary="Make an API token", cookie_only=True),
        Route(
            "DELETE",
            "/api/tokens/{token_id:int}",
            r.OwnToken(station),
            SIGNED_IN,
            summary="Revoke an own API token",
            cookie_only=True,
        ),
        Route(
            "GET",
            "/account/tokens",
            r.OwnTokensPage(station),
            SIGNED_IN,
            summary="Own API tokens page",
            cookie_only=True,
        ),
        Route(
            "GET",
            "/admin/tokens",
            r.AdminTokensPage(station),
            MANAGE_USERS,
            summary="Every account's API tokens",
            cookie_only=True,
        ),
        Route(
            "DELETE",
            "/api/admin/tokens/{token_id:int}",
            r.AdminToken(station),
            MANAGE_USERS,
            summary="Revoke any API token",
            cookie_only=True,
        ),
    ]
