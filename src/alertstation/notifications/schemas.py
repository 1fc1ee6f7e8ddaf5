"""Request and response schemas of the notification channel routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    BOOL,
    ID,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    named,
    obj,
    page,
)

CHANNEL = named(
    "NotificationChannel", obj(id=ID, name=STRING, kind=STRING, events=array(STRING), enabled=BOOL)
)
CHANNEL_FIELDS = body(name=STRING, url=STRING, events=array(STRING), enabled=BOOL)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/notifications"): page(),
    ("GET", "/api/notifications/channels"): api(obj(channels=array(CHANNEL), events=ANY_OBJECT)),
    ("POST", "/api/notifications/channels"): api(
        obj(channel=CHANNEL), status=201, request=CHANNEL_FIELDS
    ),
    ("PUT", "/api/notifications/channels/{channel_id:int}"): api(
        obj(channel=CHANNEL, changed=array(STRING)), request=CHANNEL_FIELDS
    ),
    ("DELETE", "/api/notifications/channels/{channel_id:int}"): api(obj(deleted=CHANNEL)),
    ("POST", "/api/notifications/channels/{channel_id:int}/test"): api(
        obj(delivery_id=ID, state=STRING), status=202
    ),
}
