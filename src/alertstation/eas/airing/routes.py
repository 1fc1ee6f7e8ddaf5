"""Routes of the airing settings: the outputs (Icecast, ALSA) and the Icecast source password.

They need ``system.configure``: the settings hold the Icecast source password.
"""

from alertstation.context import Station
from alertstation.eas.airing.resources import (
    REGENERATE_PATH,
    SETTINGS_PATH,
    EasSettings,
    RegenerateIcecastPassword,
)
from alertstation.http.routing import Route, permission

CONFIGURE = permission("system.configure")


def routes(station: Station) -> list[Route]:
    """Return the airing settings' routes."""
    settings = EasSettings(station)
    return [
        Route(
            "GET",
            SETTINGS_PATH,
            settings,
            CONFIGURE,
            summary="Airing settings: page, or JSON (the Icecast password left out)",
        ),
        Route(
            "PUT",
            SETTINGS_PATH,
            settings,
            CONFIGURE,
            summary="Save airing settings; config.updated audit (field names only)",
        ),
        Route(
            "POST",
            REGENERATE_PATH,
            RegenerateIcecastPassword(station),
            CONFIGURE,
            summary="New Icecast source password, returned once; audited as an action",
        ),
    ]
