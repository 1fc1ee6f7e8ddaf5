"""Routes of the alert location and filtering settings."""

from alertstation.alerts.settings_resources import (
    FILTERING_PATH,
    LOCATION_PATH,
    AlertFilteringPage,
    AreaCheck,
    LocationSettingsPage,
)
from alertstation.context import Station
from alertstation.http.routing import Route, permission


def routes(station: Station) -> list[Route]:
    """Return the routes of the alert location and filtering settings."""
    location = LocationSettingsPage(station)
    filtering = AlertFilteringPage(station)
    return [
        Route(
            "GET",
            "/api/alerts/area/check",
            AreaCheck(station),
            permission("system.view_config"),
            summary="Check alert area codes by the rule the saves use",
        ),
        Route(
            "GET",
            LOCATION_PATH,
            location,
            permission("system.view_config"),
            summary="Alert location settings page (broadcast area codes)",
        ),
        Route(
            "POST",
            LOCATION_PATH,
            location,
            permission("system.configure"),
            summary="Save the broadcast area codes (JSON or form)",
        ),
        Route(
            "GET",
            FILTERING_PATH,
            filtering,
            permission("system.view_config"),
            summary="Alert filtering page (storage area codes, forwarded events)",
        ),
        Route(
            "POST",
            FILTERING_PATH,
            filtering,
            permission("system.configure"),
            summary="Save the storage area codes and forwarded SAME events (JSON or form)",
        ),
    ]
