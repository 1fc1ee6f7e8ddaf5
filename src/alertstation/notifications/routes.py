"""Routes of notifications: the page, the channels API and a channel's test."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.notifications.resources import (
    Channel,
    Channels,
    ChannelTest,
    NotificationsPage,
)


def routes(station: Station) -> list[Route]:
    """Return the notification routes."""
    channels, channel = Channels(station), Channel(station)
    configure = permission("system.configure")
    return [
        Route(
            "GET",
            "/notifications",
            NotificationsPage(station),
            permission("system.view_config"),
            summary="Notification channels and the delivery log",
        ),
        Route(
            "GET",
            "/api/notifications/channels",
            channels,
            configure,
            summary="Notification channels (URLs never shown)",
        ),
        Route("POST", "/api/notifications/channels", channels, configure, summary="Add a channel"),
        Route(
            "PUT",
            "/api/notifications/channels/{channel_id:int}",
            channel,
            configure,
            summary="Change a channel (a blank URL keeps the stored one)",
        ),
        Route(
            "DELETE",
            "/api/notifications/channels/{channel_id:int}",
            channel,
            configure,
            summary="Remove a channel",
        ),
        Route(
            "POST",
            "/api/notifications/channels/{channel_id:int}/test",
            ChannelTest(station),
            configure,
            summary="Send a test notification through a channel",
        ),
    ]
