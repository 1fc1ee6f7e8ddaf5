"""The route registry refuses unsafe tables; the middleware enforces every rule on every route."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import falcon
import falcon.inspect
import falcon.testing
import pytest
from falcon.routing import CompiledRouter
from sqlalchemy import Engine

from alertstation.app import build_registry, create_app
from alertstation.context import Station
from alertstation.http.permissions import (
    PERMISSION_ACTIONS,
    PERMISSIONS,
    READ_ONLY_ROLES,
    ROLE_NOUNS,
    ROLES,
    permission_denial,
    role_permissions,
)
from alertstation.http.routing import (
    PUBLIC,
    SIGNED_IN,
    STATE_CHANGING,
    HeadAsGetRouter,
    Route,
    RouteConfigError,
    RouteRegistry,
    check_responders_declared,
    permission,
    role,
)
from alertstation.http.routing import (
    SELF_SERVICE_ROUTES as SELF_SERVICE,
)
from tests.support import HeaderIdentity, clear_tables, make_settings


class Thing:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"posted": True}


@pytest.mark.parametrize(
    ("route", "message"),
    [
        (Route("POST", "/t", Thing(), PUBLIC), "needs a permission or a role"),
        (Route("POST", "/t", Thing(), SIGNED_IN), "needs a permission or a role"),
        (Route("POST", "/t", Thing(), permission("eas.nope")), "not in the catalog"),
        (Route("GET", "/t", Thing(), permission("eas.nope")), "not in the catalog"),
        (Route("POST", "/t", Thing(), role("superuser")), "not in the catalog"),
        (Route("POST", "/t", Thing(), role("viewer")), "read-only role"),
        (Route("PUT", "/t", Thing(), permission("system.configure")), "no on_put"),
        (Route("GET", "t", Thing(), PUBLIC), "must start with '/'"),
        (Route("TRACE", "/t", Thing(), PUBLIC), "unsupported method"),
    ],
)
def test_registry_refuses_unsafe_routes(route: Route, message: str) -> None:
    with pytest.raises(RouteConfigError, match=message):
        RouteRegistry([route])


def test_registry_refuses_duplicates_and_two_resources_on_one_path() -> None:
    thing = Thing()
    with pytest.raises(RouteConfigError, match="declared twice"):
        RouteRegistry([Route("GET", "/t", thing, PUBLIC), Route("GET", "/t", thing, SIGNED_IN)])
    with pytest.raises(RouteConfigError, match="two resources"):
        RouteRegistry(
            [
                Route("GET", "/t", thing, PUBLIC),
                Route("POST", "/t", Thing(), permission("system.configure")),
            ]
        )


def test_undeclared_responder_is_refused() -> None:
    registry = RouteRegistry([Route("GET", "/t", Thing(), PUBLIC)])
    with pytest.raises(RouteConfigError, match="on_post.. exists but is not declared"):
        check_responders_declared(registry)


def test_app_refuses_to_start_with_an_unprotected_state_changing_route(
    tmp_path: Path, engine: Engine
) -> None:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    with pytest.raises(RouteConfigError):
        create_app(
            settings,
            engine=engine,
            extra_routes=lambda station: [
                Route("GET", "/t", Thing(), PUBLIC),
                Route("POST", "/t", Thing(), SIGNED_IN),
            ],
        )


def test_roles_and_permissions_catalog() -> None:
    assert set(ROLES) >= {"admin", "operator", "viewer", "demo"}
    assert role_permissions("admin") == frozenset(PERMISSIONS)
    assert "system.manage_users" not in role_permissions("operator")
    assert role_permissions("operator") == frozenset(PERMISSIONS) - {"system.manage_users"}
    for name in READ_ONLY_ROLES:
        assert not role_permissions(name) & {"system.configure", "eas.broadcast"}
    assert role_permissions("nobody") == frozenset()


# --- walk every registered route ---------------------------------------------------------


def _probe_routes(station: Station) -> list[Route]:
    """Routes of every access kind, so the walk covers each rule even before domains add any."""
    configure, admin_only = Thing(), Thing()
    return [
        Route("GET", "/_probe/permission", configure, permission("system.configure")),
        Route("POST", "/_probe/permission", configure, permission("system.configure")),
        Route("GET", "/_probe/role", admin_only, role("admin")),
        Route("POST", "/_probe/role", admin_only, role("admin")),
    ]


@pytest.fixture
def walk_client(tmp_path: Path, engine: Engine) -> Any:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    app = create_app(
        settings,
        engine=engine,
        extra_routes=_probe_routes,
        identity_middleware=[HeaderIdentity()],
    )
    yield app, falcon.testing.TestClient(app)
    clear_tables(engine)


def _concrete(path: str) -> str:
    """Fill a URI template with sample values (ints for :int fields)."""
    return re.sub(r"\{(\w+)(:int)?\}", lambda m: "1" if m.group(2) else "sample", path)


def test_self_service_routes_are_the_only_exception() -> None:
    assert SELF_SERVICE == {
        ("POST", "/auth/login"),
        ("POST", "/auth/logout"),
        ("POST", "/account/password"),
        ("POST", "/api/tokens"),
        ("DELETE", "/api/tokens/{token_id:int}"),
    }
    with pytest.raises(RouteConfigError, match="needs a permission or a role"):
        RouteRegistry([Route("POST", "/auth/other", Thing(), SIGNED_IN)])


def test_registry_and_app_agree(walk_client: Any) -> None:
    app, _ = walk_client
    mounted = {
        (route.path, method)
        for route in falcon.inspect.inspect_routes(app)
        for method in (m.method for m in route.methods if not m.internal)
    }
    declared = {(route.path, route.method) for route in app.registry}
    # HEAD is answered wherever GET is, by the GET responder.
    declared |= {(route.path, "HEAD") for route in app.registry if route.method == "GET"}
    assert declared == mounted


def test_every_route_enforces_its_rule(walk_client: Any) -> None:
    app, client = walk_client
    assert len(app.registry) >= 5
    for route in app.registry:
        path = _concrete(route.path)
        anonymous = client.simulate_request(route.method, path)
        if route.access == PUBLIC:
            assert anonymous.status_code not in (401, 403), (route, anonymous.status_code)
        else:
            assert anonymous.status_code == 401, (route, anonymous.status_code)
            assert anonymous.json["error"]["code"] == "unauthorized"
        for read_only in READ_ONLY_ROLES:
            result = client.simulate_request(route.method, path, headers={"X-Test-Role": read_only})
            if route.method in STATE_CHANGING and (route.method, route.path) not in SELF_SERVICE:
                assert result.status_code == 403, (route, read_only)
                assert result.json["error"]["code"] == "forbidden"
        admin = client.simulate_request(route.method, path, headers={"X-Test-Role": "admin"})
        assert admin.status_code not in (401, 403), (route, admin.status_code)


def test_permission_and_role_rules_for_signed_in_users(walk_client: Any) -> None:
    _, client = walk_client
    operator = {"X-Test-Role": "operator"}
    assert client.simulate_post("/_probe/permission", headers=operator).status_code == 200
    assert client.simulate_post("/_probe/role", headers=operator).status_code == 403
    assert client.simulate_get("/_probe/role", headers=operator).status_code == 403
    viewer = {"X-Test-Role": "viewer"}
    assert client.simulate_get("/_probe/permission", headers=viewer).status_code == 403
    assert client.simulate_get("/", headers=viewer).status_code == 200


def test_undeclared_method_is_405_with_allow(walk_client: Any) -> None:
    _, client = walk_client
    result = client.simulate_delete("/_probe/permission", headers={"X-Test-Role": "admin"})
    assert result.status_code == 405
    assert result.json["error"]["code"] == "method_not_allowed"
    assert set(result.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


def test_build_registry_lists_platform_routes(tmp_path: Path, engine: Engine) -> None:
    settings = make_settings(tmp_path, engine.url.render_as_string(hide_password=False))
    from alertstation.app import build_station

    registry = build_registry(build_station(settings, engine))
    paths = {(route.method, route.path): str(route.access) for route in registry}
    assert paths[("GET", "/healthz")] == "public"
    assert paths[("GET", "/")] == "signed_in"


def test_remembered_literal_paths_route_as_the_compiled_router(walk_client: Any) -> None:
    app, _ = walk_client
    router = app._router
    assert isinstance(router, HeadAsGetRouter)
    compiled = CompiledRouter.find  # the router without the remembered paths
    literal = [r.path for r in app.registry if "{" not in r.path]
    templated = [_concrete(r.path) for r in app.registry if "{" in r.path]
    assert literal and templated
    for path in [*literal, *templated, "//api/broadcast/state", "/api/broadcast/state/x", "/"]:
        expected = compiled(router, path)
        for _ in range(2):  # the second time a literal path comes from the remembered table
            found = router.find(path)
            assert found == expected, path
    assert set(router._literal_hits) == set(literal)
    params = router.find(literal[0])[2]
    params["x"] = 1  # a responder may change its params: the next request gets its own
    assert router.find(literal[0])[2] == {}


def test_adding_a_route_forgets_the_remembered_paths() -> None:
    router = HeadAsGetRouter()
    first, second = Thing(), Thing()
    router.add_route("/a/{name}", first)
    assert router.find("/a/b")[0] is first
    router.add_route("/a/b", second)  # a literal segment wins over a field
    assert router.find("/a/b")[0] is second
    assert router.find("/a/b")[0] is second and "/a/b" in router._literal_hits
    router.add_route("/a/c", first)
    assert router._literal_hits == {}


# --- denials in words ----------------------------------------------------------------------

_CATALOG_WORDS = re.compile(r"permission:|role:|\b(system|eas|receivers)\.[a-z_]+\b")


def test_a_denial_names_who_may_and_what_in_words(walk_client: Any) -> None:
    _, client = walk_client
    operator = {"X-Test-Role": "operator"}
    api = client.simulate_get("/api/admin/users", headers=operator)
    assert api.status_code == 403
    assert api.json["error"] == {
        "code": "forbidden",
        "message": "Only an administrator can manage users.",
    }
    page = client.simulate_get("/admin/users", headers={**operator, "Accept": "text/html"})
    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "Only an administrator can manage users." in page.text
    assert "permission:" not in page.text and "system.manage_users" not in page.text

    role_only = client.simulate_get("/_probe/role", headers=operator)
    assert role_only.json["error"]["message"] == "Only an administrator can do this."
    viewer = client.simulate_post("/_probe/permission", headers={"X-Test-Role": "viewer"})
    assert viewer.json["error"]["message"] == (
        "A viewer can look but not change anything; ask an administrator or an operator."
    )
    demo = client.simulate_get("/_probe/permission", headers={"X-Test-Role": "demo"})
    assert demo.json["error"]["message"] == (
        "Only an administrator or an operator can change the station's settings."
    )


def test_every_refusal_of_every_route_is_in_words(walk_client: Any) -> None:
    app, client = walk_client
    refused = 0
    for route in app.registry:
        if route.access.kind not in ("permission", "role"):
            continue
        for who in ROLES:
            if route.access.allows(type("Caller", (), {"role": who})()):
                continue
            result = client.simulate_request(
                route.method, _concrete(route.path), headers={"X-Test-Role": who}
            )
            assert result.status_code == 403, (route, who)
            message = result.json["error"]["message"]
            assert not _CATALOG_WORDS.search(message), (route, who, message)
            assert message.startswith(("Only ", "A ")), (route, who, message)
            refused += 1
    assert refused > 50


def test_every_permission_and_role_has_words() -> None:
    assert set(PERMISSION_ACTIONS) == set(PERMISSIONS)
    assert set(ROLE_NOUNS) == set(ROLES)
    for name in PERMISSIONS:
        assert name not in permission_denial(name)
