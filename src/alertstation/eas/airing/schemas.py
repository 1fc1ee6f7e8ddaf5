"""Request and response schemas of the airing routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANYTHING,
    BOOL,
    ID,
    INT,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    obj,
)

SETTINGS = obj(icecast_password_set=BOOL)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/eas_settings"): api(
        obj(settings=SETTINGS, sample_rates=array(INT)), also=("text/html",)
    ),
    ("PUT", "/admin/eas_settings"): api(
        obj(settings=SETTINGS, changed=array(STRING)),
        request=body(
            sample_rate=INT,
            icecast_enabled=BOOL,
            icecast_host=STRING,
            icecast_port=INT,
            icecast_mount=STRING,
            icecast_username=STRING,
            icecast_password=STRING,
            icecast_tls=BOOL,
            alsa_enabled=BOOL,
            alsa_device=STRING,
        ),
    ),
    ("POST", "/admin/eas_settings/icecast/regenerate-password"): api(
        obj(password=STRING, settings=SETTINGS)
    ),
    ("DELETE", "/api/eas/airing/queue/{item_id:int}"): api(obj(removed=ID)),
    ("POST", "/api/eas/airing/stop"): api(
        obj(stopping=ID, removed=ANYTHING), request=body(clear_queue=BOOL)
    ),
}
