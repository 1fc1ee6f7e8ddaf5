"""The notifications page and the channels API (thin: parse, call the service, shape)."""

from __future__ import annotations

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import FieldError
from alertstation.http.bodies import json_object
from alertstation.notifications import service
from alertstation.notifications.events import EVENTS

#: Audit actions of the channels API (the URL is never in the details).
CREATED, UPDATED, DELETED, TESTED = (
    "notifications.channel.created",
    "notifications.channel.updated",
    "notifications.channel.deleted",
    "notifications.channel.tested",
)


def _target(channel: dict[str, object]) -> str:
    return f"notification_channel:{channel['id']}"


class Channels:
    """GET/POST /api/notifications/channels."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            resp.media = {"channels": service.list_channels(conn), "events": EVENTS}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = service.check_channel(json_object(req), creating=True)
        station, actor = self._station, Actor.from_request(req)
        try:
            with begin_write(station.engine) as conn:
                channel = service.create_channel(conn, data, by=actor.username, now=station.clock())
                details = {"name": channel["name"], "kind": channel["kind"],
                           "events": channel["events"], "enabled": channel["enabled"]}  # fmt: skip
                station.ledger.record(conn, actor, CREATED, target=_target(channel),
                                      details=details)  # fmt: skip
        except FieldError as ex:
            raise ex.as_app_error() from None
        resp.status = falcon.HTTP_201
        resp.media = {"channel": channel}


class Channel:
    """PUT/DELETE /api/notifications/channels/{id}."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_put(self, req: falcon.Request, resp: falcon.Response, channel_id: int) -> None:
        data = service.check_channel(json_object(req), creating=False)
        station, actor = self._station, Actor.from_request(req)
        try:
            with begin_write(station.engine) as conn:
                channel, changed = service.update_channel(
                    conn, channel_id, data, by=actor.username, now=station.clock()
                )
                station.ledger.record(
                    conn, actor, UPDATED, target=_target(channel),
                    details={"name": channel["name"], "fields": changed},
                )  # fmt: skip
        except FieldError as ex:
            raise ex.as_app_error() from None
        resp.media = {"channel": channel, "changed": changed}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, channel_id: int) -> None:
        station, actor = self._station, Actor.from_request(req)
        with begin_write(station.engine) as conn:
            channel = service.delete_channel(conn, channel_id)
            station.ledger.record(
                conn, actor, DELETED, target=_target(channel), details={"name": channel["name"]}
            )
        resp.media = {"deleted": channel}


class ChannelTest:
    """POST /api/notifications/channels/{id}/test: queue a test message for the worker."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response, channel_id: int) -> None:
        station, actor = self._station, Actor.from_request(req)
        with begin_write(station.engine) as conn:
            delivery_id = service.send_test(
                conn, channel_id, by=actor.username or "an operator", now=station.clock()
            )
            station.ledger.record(
                conn, actor, TESTED, target=f"notification_channel:{channel_id}",
                details={"delivery_id": delivery_id},
            )  # fmt: skip
        resp.status = falcon.HTTP_202
        resp.media = {"delivery_id": delivery_id, "state": "pending"}


class NotificationsPage:
    """GET /notifications: the channels and the delivery log."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            channels = service.list_channels(conn)
            log = service.delivery_log(conn)
        self._station.templates.page(
            req, resp, "notifications.html", channels=channels, deliveries=log, events=EVENTS
        )
