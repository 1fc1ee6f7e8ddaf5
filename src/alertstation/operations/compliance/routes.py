"""Routes of monitoring compliance."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.operations.compliance.resources import (
    CompliancePage,
    ComplianceResource,
    ComplianceSettingsResource,
)

VIEW = permission("system.view_config")
CONFIGURE = permission("system.configure")


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    return [
        Route(
            "GET",
            "/eas/compliance",
            CompliancePage(station),
            VIEW,
            summary="Monitoring compliance: assigned sources, own tests, RMT deadlines, alarms",
        ),
        Route(
            "GET",
            "/api/eas/compliance",
            ComplianceResource(station),
            VIEW,
            summary="Monitoring compliance as JSON",
        ),
        Route(
            "PUT",
            "/api/eas/compliance/settings",
            ComplianceSettingsResource(station),
            CONFIGURE,
            summary="Assign monitoring sources, set the silence days; config.updated audit",
        ),
    ]
