"""Routes of the automatic-ban settings."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.security.autoban.resources import AutobanSettingsResource

PATH = "/admin/security/autoban"


def routes(station: Station) -> list[Route]:
    """Return the automatic-ban settings routes."""
    resource = AutobanSettingsResource(station)
    return [
        Route(
            "GET",
            PATH,
            resource,
            permission("system.view_config"),
            summary="Automatic-ban detectors and event retention",
        ),
        Route(
            "PUT",
            PATH,
            resource,
            permission("system.configure"),
            summary="Change the automatic-ban detectors",
            max_body=16_384,
        ),
    ]
