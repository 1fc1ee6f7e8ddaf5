"""Routes of the airing settings (outputs, Icecast source password), Stop and Remove.

The settings need ``system.configure``: they hold the Icecast source password. Stop and Remove
need ``eas.broadcast``.
"""

from alertstation.context import Station
from alertstation.eas.airing.resources import (
    QUEUE_ITEM_PATH,
    REGENERATE_PATH,
    SETTINGS_PATH,
    STOP_PATH,
    AiringQueueItem,
    AiringStop,
    EasSettings,
    RegenerateIcecastPassword,
)
from alertstation.http.routing import Route, permission

CONFIGURE = permission("system.configure")
BROADCAST = permission("eas.broadcast")


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
            summary="Save airing settings; config.updated audit (names, non-secret values)",
        ),
        Route(
            "POST",
            REGENERATE_PATH,
            RegenerateIcecastPassword(station),
            CONFIGURE,
            summary="New Icecast source password, returned once; audited as an action",
        ),
        Route(
            "POST",
            STOP_PATH,
            AiringStop(station),
            BROADCAST,
            summary="Stop the message on the air (EOM sent, relays released); audited",
        ),
        Route(
            "DELETE",
            QUEUE_ITEM_PATH,
            AiringQueueItem(station),
            BROADCAST,
            summary="Take a queued message off the airing queue before it airs; audited",
        ),
    ]
