"""The route registry: every route declared once with exactly one access rule.

A domain package contributes ``ROUTES``, a list of :class:`Route` rows. ``create_app`` builds a
:class:`RouteRegistry` from all of them; the registry refuses to exist when a state-changing route
has no permission or role, names one outside the catalog, or disagrees with its resource's
responders. The authorisation middleware looks every request up here: no entry means deny.

HEAD is answered wherever GET is, by the GET responder under the GET route's access rule
(:class:`HeadAsGetRouter` maps it; Falcon sends the headers without the body), so uptime
monitors that send HEAD see the station as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import falcon.inspect
from falcon.routing import CompiledRouter

from alertstation.http.permissions import (
    ADMIN_SCOPE,
    PERMISSIONS,
    READ_ONLY_ROLES,
    READ_SCOPE,
    ROLES,
    permission_denial,
    role_denial,
    role_permissions,
)

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
_SUFFIX = re.compile(r"^[a-z][a-z0-9_]*$")

# The only state-changing routes that need no permission or role: signing in, signing out,
# changing one's own password and managing one's own API tokens concern the caller's own
# account, whatever their role. They accept a cookie session only, never an API token.
SELF_SERVICE_ROUTES = frozenset(
    {
        ("POST", "/auth/login"),
        ("POST", "/auth/logout"),
        ("POST", "/account/password"),
        ("POST", "/api/tokens"),
        ("DELETE", "/api/tokens/{token_id:int}"),
    }
)
READ_METHODS = frozenset({"GET", "HEAD"})


class RouteConfigError(RuntimeError):
    """The route table breaks a rule the station will not start without."""


@dataclass(frozen=True)
class Access:
    """Who may call a route: exactly one of public, signed-in, a permission or a role."""

    kind: str
    name: str | None = None

    def __str__(self) -> str:
        return self.kind if self.name is None else f"{self.kind}:{self.name}"

    def allows(self, user: Any) -> bool:
        """Tell whether ``user`` (None when anonymous) passes this rule."""
        if self.kind == "public":
            return True
        if user is None:
            return False
        if self.kind == "signed_in":
            return True
        if self.kind == "permission":
            return self.name in role_permissions(user.role)
        return user.role == self.name

    def covered_by(self, method: str, scopes: frozenset[str]) -> bool:
        """Tell whether an API token's ``scopes`` cover this rule for ``method``.

        ``read`` covers GET (and HEAD) of the routes that only need sign-in; a permission covers
        the routes that require it; ``admin`` covers the routes that require the admin role.
        The owner's own rights are checked apart (:meth:`allows`): a token gets both or nothing.
        """
        if self.kind == "public":
            return True
        if self.kind == "signed_in":
            return method in READ_METHODS and READ_SCOPE in scopes
        if self.kind == "permission":
            return self.name in scopes
        return self.name == "admin" and ADMIN_SCOPE in scopes

    def denial(self) -> str:
        """Return, in words, why a caller this rule refuses is refused."""
        if self.kind == "permission" and self.name is not None:
            return permission_denial(self.name)
        if self.kind == "role" and self.name is not None:
            return role_denial(self.name)
        return "Sign in to continue."


PUBLIC = Access("public")
SIGNED_IN = Access("signed_in")


def permission(name: str) -> Access:
    """Require a permission from the catalog."""
    return Access("permission", name)


def role(name: str) -> Access:
    """Require a role by name."""
    return Access("role", name)


@dataclass(frozen=True)
class Route:
    """One (method, path) the app answers, the resource that answers it and who may call it."""

    method: str
    path: str
    resource: Any
    access: Access
    suffix: str | None = None
    summary: str = ""
    max_body: int | None = None  # bytes; None means the station-wide request limit
    cookie_only: bool = False  # a signed-in browser session only, never an API token

    @property
    def accepts_token(self) -> bool:
        """Tell whether an API token may call this route (scopes permitting)."""
        return not self.cookie_only and (self.method, self.path) not in SELF_SERVICE_ROUTES

    @property
    def responder_name(self) -> str:
        """Return the Falcon responder method this route calls, e.g. ``on_post_send``."""
        base = f"on_{self.method.lower()}"
        return f"{base}_{self.suffix}" if self.suffix else base


class RouteRegistry:
    """Validated, immutable lookup of (uri template, method) → Route."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self._routes: dict[tuple[str, str], Route] = {}
        for route in routes:
            validate_route(route)
            key = (route.path, route.method)
            if key in self._routes:
                raise RouteConfigError(f"{route.method} {route.path} is declared twice")
            self._routes[key] = route
        self._check_one_resource_per_path()

    def __iter__(self) -> Iterator[Route]:
        return iter(sorted(self._routes.values(), key=lambda r: (r.path, r.method)))

    def __len__(self) -> int:
        return len(self._routes)

    def lookup(self, path_template: str | None, method: str) -> Route | None:
        """Return the route for a matched URI template and method, None when undeclared.

        HEAD without a route of its own takes the GET route (and so its access rule).
        """
        if path_template is None:
            return None
        route = self._routes.get((path_template, method))
        if route is None and method == "HEAD":
            route = self._routes.get((path_template, "GET"))
        return route

    def largest_body_limit(self, default: int) -> int:
        """Return the largest request body any route accepts (for the early size check)."""
        return max([default, *(r.max_body for r in self._routes.values() if r.max_body)])

    def methods_for(self, path_template: str) -> list[str]:
        """Return the declared methods of a path (HEAD wherever GET is), sorted."""
        methods = {m for (p, m) in self._routes if p == path_template}
        if "GET" in methods:
            methods.add("HEAD")
        return sorted(methods)

    def _check_one_resource_per_path(self) -> None:
        seen: dict[str, tuple[Any, str | None]] = {}
        for route in self._routes.values():
            first = seen.setdefault(route.path, (route.resource, route.suffix))
            if first[0] is not route.resource or first[1] != route.suffix:
                raise RouteConfigError(
                    f"{route.path} is declared with two resources or suffixes; use one per path"
                )

    def mounts(self) -> list[tuple[str, Any, str | None]]:
        """Return each path once with its resource and suffix, for ``app.add_route``."""
        seen: dict[str, tuple[Any, str | None]] = {}
        for route in self:
            seen.setdefault(route.path, (route.resource, route.suffix))
        return [(path, resource, suffix) for path, (resource, suffix) in seen.items()]


class HeadAsGetRouter(CompiledRouter):
    """Falcon's router, with HEAD answered by the GET responder where a resource has no on_head.

    A path that is exactly a template without fields (``/api/broadcast/state``) is remembered
    once the compiled router has found it, and found again with one dict lookup; there are at
    most as many such paths as routes, and adding a route forgets them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._literal_hits: dict[str, tuple[object, Any, str]] = {}

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        self._literal_hits = {}
        super().add_route(uri_template, resource, **kwargs)

    def find(self, uri: str, req: Any = None) -> Any:
        hit = self._literal_hits.get(uri)
        if hit is not None:
            return hit[0], hit[1], {}, hit[2]
        found = super().find(uri, req)
        if found is not None and found[3] == uri and not found[2]:
            self._literal_hits[uri] = (found[0], found[1], uri)
        return found

    def map_http_methods(self, resource: object, **kwargs: Any) -> Any:
        method_map = super().map_http_methods(resource, **kwargs)
        if "GET" in method_map and "HEAD" not in method_map:
            method_map["HEAD"] = method_map["GET"]
        return method_map


falcon.inspect.register_router(HeadAsGetRouter)(falcon.inspect.inspect_compiled_router)


def validate_route(route: Route) -> None:
    """Raise RouteConfigError when a route breaks the access or wiring rules."""
    where = f"{route.method} {route.path}"
    if route.method not in METHODS:
        raise RouteConfigError(f"{where}: unsupported method")
    if not route.path.startswith("/"):
        raise RouteConfigError(f"{where}: path must start with '/'")
    if route.suffix is not None and not _SUFFIX.match(route.suffix):
        raise RouteConfigError(f"{where}: bad responder suffix {route.suffix!r}")
    access = route.access
    if access.kind in ("public", "signed_in") and access.name is not None:
        raise RouteConfigError(f"{where}: {access.kind} takes no name")
    if access.kind == "permission" and access.name not in PERMISSIONS:
        raise RouteConfigError(f"{where}: permission {access.name!r} is not in the catalog")
    if access.kind == "role" and access.name not in ROLES:
        raise RouteConfigError(f"{where}: role {access.name!r} is not in the catalog")
    if access.kind not in ("public", "signed_in", "permission", "role"):
        raise RouteConfigError(f"{where}: unknown access kind {access.kind!r}")
    self_service = (route.method, route.path) in SELF_SERVICE_ROUTES
    if route.method in STATE_CHANGING and access.kind not in ("permission", "role"):
        if not self_service:
            raise RouteConfigError(f"{where}: a state-changing route needs a permission or a role")
    if route.method in STATE_CHANGING and access.kind == "role" and access.name in READ_ONLY_ROLES:
        raise RouteConfigError(f"{where}: read-only role {access.name!r} cannot change state")
    if not callable(getattr(route.resource, route.responder_name, None)):
        raise RouteConfigError(f"{where}: resource has no {route.responder_name}()")


def check_responders_declared(registry: RouteRegistry) -> None:
    """Raise when a resource answers a method the registry does not declare.

    Falcon would otherwise route such a method to the resource with no access rule; the
    authorisation middleware would deny it, but an undeclared responder is a wiring mistake.
    """
    declared = {(r.path, r.method) for r in registry}
    for path, resource, suffix in registry.mounts():
        for method in METHODS:
            name = f"on_{method.lower()}" + (f"_{suffix}" if suffix else "")
            if callable(getattr(resource, name, None)) and (path, method) not in declared:
                raise RouteConfigError(f"{method} {path}: {name}() exists but is not declared")
