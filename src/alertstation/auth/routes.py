"""Routes of sign-in, accounts and sessions."""

from alertstation.auth import resources as r
from alertstation.auth.tokens import routes as token_routes
from alertstation.context import Station
from alertstation.http.routing import PUBLIC, SIGNED_IN, Route, permission

MANAGE_USERS = permission("system.manage_users")


def routes(station: Station) -> list[Route]:
    """Return the account and session routes."""
    users_page = r.UsersPage(station)
    user_item = r.UserItem(station)
    return [
        Route("GET", "/login", r.LoginPage(station), PUBLIC, summary="Sign-in page"),
        Route("POST", "/auth/login", r.Login(station), PUBLIC, summary="Sign in"),
        Route(
            "POST",
            "/auth/logout",
            r.Logout(station),
            SIGNED_IN,
            summary="Sign out",
            cookie_only=True,
        ),
        Route("GET", "/auth/session", r.CurrentSession(), SIGNED_IN, summary="Who am I"),
        Route("GET", "/account", r.AccountPage(station), SIGNED_IN, summary="Own account"),
        Route(
            "POST",
            "/account/password",
            r.OwnPassword(station),
            SIGNED_IN,
            summary="Change own password",
            cookie_only=True,
        ),
        Route("GET", "/admin/users", users_page, MANAGE_USERS, summary="Users page"),
        Route("POST", "/admin/users", users_page, MANAGE_USERS, summary="Create a user"),
        Route("GET", "/api/admin/users", r.UsersApi(station), MANAGE_USERS, summary="List users"),
        Route("PATCH", "/admin/users/{user_id:int}", user_item, MANAGE_USERS, summary="Update"),
        Route("DELETE", "/admin/users/{user_id:int}", user_item, MANAGE_USERS, summary="Delete"),
        Route("GET", "/admin/sessions", r.SessionsPage(station), MANAGE_USERS, summary="Sessions"),
        Route(
            "GET",
            "/api/admin/sessions",
            r.SessionsApi(station),
            MANAGE_USERS,
            summary="Sweep idle sessions, then list",
        ),
        Route(
            "POST",
            "/api/admin/sessions/{session_id:int}/terminate",
            r.SessionTerminate(station),
            MANAGE_USERS,
            summary="End one session",
        ),
        Route(
            "POST",
            "/api/admin/sessions/terminate-others",
            r.SessionTerminateOthers(station),
            MANAGE_USERS,
            summary="End all other sessions",
        ),
        *token_routes.routes(station),
    ]
