"""Routes of station settings administration."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.settings_admin.resources import (
    EnvironmentPage,
    EnvironmentVariables,
    ReceiverAllowlistPage,
)


def routes(station: Station) -> list[Route]:
    """Return the settings administration routes."""
    variables = EnvironmentVariables(station)
    return [
        Route(
            "GET",
            "/api/environment/variables",
            variables,
            permission("system.view_config"),
            summary="Saved variables (secrets redacted)",
        ),
        Route(
            "PUT",
            "/api/environment/variables",
            variables,
            permission("system.configure"),
            summary="Save variables (applied on restart)",
        ),
        Route(
            "GET",
            "/admin/environment",
            EnvironmentPage(station),
            permission("system.view_config"),
            summary="Environment variables page",
        ),
        Route(
            "GET",
            "/admin/receiver_allowlist",
            ReceiverAllowlistPage(station),
            permission("system.view_config"),
            summary="Programs radio receivers may run (admins change them)",
        ),
    ]
