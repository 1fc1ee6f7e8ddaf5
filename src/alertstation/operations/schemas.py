"""Request and response schemas of the operations routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    COUNT,
    NUMBER,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    download,
    nullable,
    obj,
    page,
)

VOICE = {"voice": STRING, "rate": STRING, "volume": STRING, "text": STRING}
PEM = {"type": "string", "contentMediaType": "application/x-pem-file"}
INCLUDE_KEYS = body(include_keys={"anyOf": [BOOL, STRING]})
OPTIMIZED = obj(backend=STRING)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/env_config"): page(),
    ("GET", "/admin/settings"): page(),
    ("GET", "/admin/operations/backup"): page(),
    ("POST", "/admin/operations/backup"): RouteSchema(
        media=("application/gzip",), request=INCLUDE_KEYS, urlencoded=INCLUDE_KEYS
    ),
    ("GET", "/admin/operations/upgrade"): api(
        obj(
            version=STRING,
            revision=nullable(STRING),
            head=nullable(STRING),
            up_to_date=BOOL,
            migrations=array(ANY_OBJECT),
            release_notes=nullable(STRING),
            steps=array(STRING),
        ),
        also=("text/html",),
    ),
    ("GET", "/admin/optimize_db"): api(
        obj(backend=STRING, size=nullable(COUNT)), also=("text/html",)
    ),
    ("POST", "/admin/optimize_db"): api(OPTIMIZED, also=("text/html",)),
    ("GET", "/api/settings"): api(obj(sections=ANY_OBJECT)),
    ("GET", "/api/settings/certificate"): api(
        obj(installed=nullable(ANY_OBJECT), status=nullable(ANY_OBJECT))
    ),
    ("POST", "/api/settings/certificate"): api(
        obj(installed=ANY_OBJECT, status=nullable(ANY_OBJECT), changed=array(STRING)),
        form=obj(certificate=PEM, private_key=PEM),
    ),
    ("POST", "/api/settings/hardware/test-relay"): api(
        obj(pin=ANYTHING, seconds=NUMBER, pulsed=BOOL),
        request=body(pin={"type": "integer"}, seconds=NUMBER),
    ),
    ("GET", "/api/settings/tts/preview"): download("audio/wav", query=VOICE),
    ("POST", "/api/settings/tts/preview"): download(
        "audio/wav", request=body(voice=STRING, rate=ANYTHING, volume=ANYTHING, text=STRING)
    ),
    ("PUT", "/api/settings/{section}"): api(
        obj(section=STRING, settings=ANY_OBJECT, changed=array(STRING)),
        request=ANY_OBJECT,
        path={"section": {"enum": ["application", "hardware", "tts", "decoder_feed"]}},
    ),
}
