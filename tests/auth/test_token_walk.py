"""Every route of the registry, called with a token of each single scope (and HEAD wherever
there is a GET): none is reached unless the scope covers it.

A spy placed after every other middleware answers in place of the resource, so no resource
runs (nothing is sent, aired or deleted) and a route "reached" means the authorisation let the
request through. The owner is an administrator, so the token's scope alone decides. The walk
runs on SQLite only: it tests the access rule, which is the same on both backends; the token
store itself is tested on both (``test_tokens.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon
import falcon.testing
import pytest
from sqlalchemy import insert

from alertstation.app import StationApp, create_app
from alertstation.auth.service import get_user
from alertstation.auth.tables import users
from alertstation.auth.tokens import service as tokens
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from alertstation.http.permissions import PERMISSIONS, TOKEN_SCOPES
from alertstation.http.routing import Route
from alertstation.schema import metadata
from tests.support import make_settings

# Routes that take a browser session only: the self-service routes and token management.
COOKIE_ONLY = {
    ("POST", "/auth/logout"),
    ("POST", "/account/password"),
    ("GET", "/api/tokens"),
    ("POST", "/api/tokens"),
    ("DELETE", "/api/tokens/{token_id:int}"),
    ("GET", "/account/tokens"),
    ("GET", "/admin/tokens"),
    ("DELETE", "/api/admin/tokens/{token_id:int}"),
}
REFUSALS = {"token_scope", "token_not_accepted"}


class Reached:
    """Answer 200 with ``X-Reached`` in place of the resource, once authorisation let it by."""

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        raise falcon.HTTPStatus(falcon.HTTP_200, headers={"X-Reached": "yes"})


def should_reach(route: Route, scope: str) -> bool:
    """The rule, as issue and docs state it, written apart from the code that applies it."""
    if route.access.kind == "public":
        return True
    if (route.method, route.path) in COOKIE_ONLY:
        return False
    if route.access.kind == "signed_in":
        return route.method == "GET" and scope == "read"
    if route.access.kind == "permission":
        return route.access.name == scope
    return route.access.name == "admin" and scope == "admin"


def concrete(path: str) -> str:
    return re.sub(r"\{[a-z_]+(:int)?\}", lambda m: "1" if m.group(1) else "x", path)


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StationApp, dict[str, str]]]:
    folder: Path = tmp_path_factory.mktemp("walk")
    url = f"sqlite:///{folder / 'walk.db'}"
    engine = make_engine(url)
    metadata.create_all(engine)
    app = create_app(make_settings(folder, url), engine=engine)
    app.add_middleware(Reached())
    now = utcnow()
    issued = {}
    with begin_write(engine) as conn:
        owner_id = conn.execute(
            insert(users)
            .values(
                username="boss",
                password_hash="!",
                role="admin",
                created_at=now,
                updated_at=now,
                password_changed_at=now,
            )
            .returning(users.c.id)
        ).scalar_one()
        owner = get_user(conn, owner_id)
        for scope in TOKEN_SCOPES:
            issued[scope], _ = tokens.create_token(
                conn,
                owner,
                name=scope,
                scopes=[scope],
                expires_in_days=None,
                now=now,
                secret_key=app.station.settings.secret_key,
            )
    yield app, issued
    engine.dispose()


def test_the_scopes_are_the_catalog_plus_read_and_admin() -> None:
    assert set(TOKEN_SCOPES) == {*PERMISSIONS, "read", "admin"}


def test_cookie_only_routes_are_registered_and_every_self_service_change_is_one(
    walk: tuple[StationApp, dict[str, str]],
) -> None:
    app, _ = walk
    declared = {(route.method, route.path) for route in app.registry}
    assert COOKIE_ONLY <= declared
    for route in app.registry:
        if route.method != "GET" and route.access.kind == "signed_in":
            assert (route.method, route.path) in COOKIE_ONLY | {("POST", "/auth/login")}


@pytest.mark.parametrize("scope", TOKEN_SCOPES)
def test_a_token_reaches_only_the_routes_its_scope_covers(
    walk: tuple[StationApp, dict[str, str]], scope: str
) -> None:
    app, issued = walk
    client = falcon.testing.TestClient(app)
    headers = {"Authorization": f"Bearer {issued[scope]}", "Accept": "application/json"}
    wrong: list[str] = []
    reached = 0
    calls = [(route.method, route) for route in app.registry]
    calls += [("HEAD", route) for route in app.registry if route.method == "GET"]
    for method, route in calls:
        result = client.simulate_request(method, concrete(route.path), headers=headers)
        got = result.headers.get("X-Reached") == "yes"
        want = should_reach(route, scope)
        reached += got
        if got != want:
            wrong.append(f"{method} {route.path}: reached={got}, status {result.status}")
        elif not got and (
            result.status_code != 403
            or (method != "HEAD" and result.json["error"]["code"] not in REFUSALS)
        ):
            wrong.append(f"{method} {route.path}: refused with {result.status}")
    assert not wrong, "\n".join(wrong)
    assert reached > 0
