"""Build the Falcon application: wire settings, database, middleware and every domain's routes."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import falcon
from sqlalchemy import Engine

import alertstation.schema  # noqa: F401  (the whole schema on the shared metadata)
from alertstation.alerts import routes as alerts_routes
from alertstation.alerts import schemas as alerts_schemas
from alertstation.alerts import settings_routes as alert_settings_routes
from alertstation.alerts.poll import routes as poll_routes
from alertstation.alerts.poll import schemas as alerts_poll_schemas
from alertstation.audio import routes as audio_routes
from alertstation.audio import schemas as audio_schemas
from alertstation.audit import routes as audit_routes
from alertstation.audit import schemas as audit_schemas
from alertstation.auth import routes as auth_routes
from alertstation.auth import schemas as auth_schemas
from alertstation.auth.middleware import SessionMiddleware
from alertstation.auth.presence import request_signed_in
from alertstation.auth.sessions import COOKIE_NAME
from alertstation.context import Station
from alertstation.db.types import utcnow
from alertstation.eas import routes as eas_routes
from alertstation.eas import schemas as eas_schemas
from alertstation.eas.airing import routes as airing_routes
from alertstation.eas.airing import schemas as eas_airing_schemas
from alertstation.eas.forward import routes as forward_routes
from alertstation.eas.forward import schemas as eas_forward_schemas
from alertstation.eas.log import routes as eas_log_routes
from alertstation.eas.log import schemas as eas_log_schemas
from alertstation.http.demo import DemoMasking
from alertstation.http.errors import ErrorRenderer, install_error_handlers
from alertstation.http.media import install_media_handlers
from alertstation.http.middleware import AuthorizationMiddleware, RequestContextMiddleware
from alertstation.http.openapi import (
    ANY_OBJECT,
    OpenApiResource,
    RouteKey,
    RouteSchema,
    api,
    build_document,
)
from alertstation.http.routing import (
    SIGNED_IN,
    HeadAsGetRouter,
    Route,
    RouteRegistry,
    check_responders_declared,
)
from alertstation.notifications import routes as notifications_routes
from alertstation.notifications import schemas as notifications_schemas
from alertstation.operations import routes as operations_routes
from alertstation.operations import schemas as operations_schemas
from alertstation.operations.compliance import routes as compliance_routes
from alertstation.operations.compliance import schemas as operations_compliance_schemas
from alertstation.operations.public import routes as public_routes
from alertstation.operations.public import schemas as operations_public_schemas
from alertstation.security.autoban import routes as autoban_routes
from alertstation.security.autoban import schemas as security_autoban_schemas
from alertstation.security.autoban.detectors import AutoBanMiddleware
from alertstation.security.bans import routes as security_routes
from alertstation.security.bans import schemas as security_bans_schemas
from alertstation.security.bans.gate import BanGate
from alertstation.security.center import routes as center_routes
from alertstation.security.center import schemas as security_center_schemas
from alertstation.security.geoip import routes as geoip_routes
from alertstation.security.geoip import schemas as security_geoip_schemas
from alertstation.security.hostban import routes as hostban_routes
from alertstation.security.hostban import schemas as security_hostban_schemas
from alertstation.settings import Settings
from alertstation.settings_admin import routes as settings_admin_routes
from alertstation.settings_admin import schemas as settings_admin_schemas
from alertstation.station import build_station
from alertstation.system import routes as system_routes
from alertstation.system import schemas as system_schemas
from alertstation.traffic import routes as traffic_routes
from alertstation.traffic import schemas as traffic_schemas
from alertstation.traffic.recorder import TrafficMiddleware, TrafficRecorder
from alertstation.version import __version__
from alertstation.zones import routes as zones_routes
from alertstation.zones import schemas as zones_schemas

RouteSource = Callable[[Station], list[Route]]

log = logging.getLogger("alertstation.app")


def api_routes(station: Station) -> list[Route]:
    """Return the API's own routes: its OpenAPI document (built from the registry)."""
    return [
        Route(
            "GET",
            "/api/openapi.json",
            OpenApiResource(),
            SIGNED_IN,
            summary="The OpenAPI 3.1 document of every route, with access rules and schemas",
        )
    ]


# Each domain package contributes a routes(station) function; add new domains here.
ROUTE_SOURCES: tuple[RouteSource, ...] = (
    system_routes.routes,
    auth_routes.routes,
    audit_routes.routes,
    zones_routes.routes,
    settings_admin_routes.routes,
    security_routes.routes,
    hostban_routes.routes,
    alerts_routes.routes,
    poll_routes.routes,
    alert_settings_routes.routes,
    eas_routes.routes,
    airing_routes.routes,
    geoip_routes.routes,
    forward_routes.routes,
    eas_log_routes.routes,
    center_routes.routes,
    autoban_routes.routes,
    audio_routes.routes,
    traffic_routes.routes,
    notifications_routes.routes,
    operations_routes.routes,
    compliance_routes.routes,
    public_routes.routes,
    api_routes,
)

# Each domain package declares its routes' request and response schemas in schemas.SCHEMAS.
SCHEMA_SOURCES: tuple[Mapping[RouteKey, RouteSchema], ...] = (
    system_schemas.SCHEMAS,
    auth_schemas.SCHEMAS,
    audit_schemas.SCHEMAS,
    zones_schemas.SCHEMAS,
    settings_admin_schemas.SCHEMAS,
    security_bans_schemas.SCHEMAS,
    security_hostban_schemas.SCHEMAS,
    alerts_schemas.SCHEMAS,
    alerts_poll_schemas.SCHEMAS,
    eas_schemas.SCHEMAS,
    eas_airing_schemas.SCHEMAS,
    security_geoip_schemas.SCHEMAS,
    eas_forward_schemas.SCHEMAS,
    eas_log_schemas.SCHEMAS,
    security_center_schemas.SCHEMAS,
    security_autoban_schemas.SCHEMAS,
    audio_schemas.SCHEMAS,
    traffic_schemas.SCHEMAS,
    notifications_schemas.SCHEMAS,
    operations_schemas.SCHEMAS,
    operations_compliance_schemas.SCHEMAS,
    operations_public_schemas.SCHEMAS,
    {("GET", "/api/openapi.json"): api(ANY_OBJECT)},
)


class StationApp(falcon.App):
    """A falcon.App that keeps its station and route registry for tools and tests."""

    station: Station
    registry: RouteRegistry
    traffic: TrafficRecorder


def build_registry(
    station: Station, sources: Iterable[RouteSource] = ROUTE_SOURCES
) -> RouteRegistry:
    """Collect every domain's routes into one validated registry."""
    registry = RouteRegistry(route for source in sources for route in source(station))
    check_responders_declared(registry)
    for route in registry:
        if isinstance(route.resource, OpenApiResource):
            route.resource.attach(lambda: openapi_document(registry))
    return registry


def route_schemas() -> dict[RouteKey, RouteSchema]:
    """Return every declared route schema, keyed by (method, path)."""
    merged: dict[RouteKey, RouteSchema] = {}
    for source in SCHEMA_SOURCES:
        merged.update(source)
    return merged


def openapi_document(registry: RouteRegistry) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of ``registry`` (the one /api/openapi.json serves)."""
    return build_document(
        registry, route_schemas(), version=__version__, session_cookie=COOKIE_NAME
    )


def create_app(
    settings: Settings,
    *,
    engine: Engine | None = None,
    extra_routes: RouteSource | None = None,
    identity_middleware: Sequence[Any] | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> StationApp:
    """Return the WSGI application for ``settings``.

    ``identity_middleware`` runs after the request context is set and before authorisation and
    puts the signed-in user on ``req.context.user``; the default is the session cookie
    middleware (tests may substitute their own). ``extra_routes`` lets tests mount routes that go
    through the same registry rules as the product's own. ``clock`` returns the current UTC time.
    """
    station = build_station(settings, engine, clock)
    if identity_middleware is None:
        identity_middleware = [SessionMiddleware(station)]
    sources = ROUTE_SOURCES + ((extra_routes,) if extra_routes else ())
    registry = build_registry(station, sources)
    traffic = TrafficMiddleware.for_station(station)

    app = StationApp(
        router=HeadAsGetRouter(),
        middleware=[
            RequestContextMiddleware(
                settings.trusted_proxies, registry.largest_body_limit(settings.max_request_bytes)
            ),
            traffic,
            BanGate(station.bans),
            AutoBanMiddleware(station, signed_in=request_signed_in),
            *identity_middleware,
            AuthorizationMiddleware(registry, settings.max_request_bytes),
            DemoMasking(),
        ],
    )
    app.station = station
    app.registry = registry
    app.traffic = traffic.recorder
    app.req_options.strip_url_path_trailing_slash = True
    install_media_handlers(app)
    install_error_handlers(app, ErrorRenderer(station.templates))
    for path, resource, suffix in registry.mounts():
        app.add_route(path, resource, suffix=suffix) if suffix else app.add_route(path, resource)
    app.add_static_route("/static", str(station.templates.static_dir))
    return app
