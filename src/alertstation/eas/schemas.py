"""Request and response schemas of the manual EAS and archive routes (alertstation.http.openapi)."""

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
    download,
    obj,
    page,
)

WAV = "audio/wav"
COMPOSITION = body(
    event=STRING,
    org=STRING,
    locations={"anyOf": [STRING, array(STRING)]},
    purge=STRING,
    station_id=STRING,
    voice_text=STRING,
    header=STRING,
    archive_only=BOOL,
)
COMPOSITION_FORM = {
    "type": "object",
    "properties": {
        **COMPOSITION["properties"],
        "audio": {"type": "string", "contentMediaType": "audio/wav"},
    },
}
IDS = {
    "type": "object",
    "properties": {
        "ids": {"type": "array", "items": ID, "minItems": 1, "maxItems": 1000},
        "all": BOOL,
    },
}
ARCHIVE_ONLY = body(archive_only=BOOL)
SENT = obj(sent=BOOL, message=ANY_OBJECT, queue=ANY_OBJECT)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("POST", "/admin/eas/manual_generate"): api(
        obj(sent=BOOL, activation_id=ID, message=ANY_OBJECT, queue=ANY_OBJECT),
        status=201,
        request=COMPOSITION,
        form=COMPOSITION_FORM,
    ),
    ("GET", "/eas/manual"): page(),
    ("GET", "/eas/manual/events"): api(obj(activations=array(ANY_OBJECT))),
    ("POST", "/eas/manual/events"): api(
        obj(activation=ANY_OBJECT), status=201, request=COMPOSITION, form=COMPOSITION_FORM
    ),
    ("POST", "/eas/manual/events/purge"): api(obj(purged=array(ID)), request=IDS),
    ("GET", "/eas/manual/events/{activation_id:int}/audio.wav"): download(WAV),
    ("GET", "/eas/manual/events/{activation_id:int}/confirmation"): api(
        obj(confirmation=ANY_OBJECT)
    ),
    ("POST", "/eas/manual/events/{activation_id:int}/send"): api(SENT, request=ARCHIVE_ONLY),
    ("GET", "/eas/queue"): api(obj(items=array(ANY_OBJECT), active=BOOL)),
    ("POST", "/manual/generate"): download(WAV, request=COMPOSITION),
    ("GET", "/messages"): api(obj(messages=array(ANY_OBJECT))),
    ("POST", "/messages/purge"): api(obj(deleted=array(ID)), request=IDS),
    ("GET", "/messages/{message_id:int}/audio.wav"): download(WAV),
    ("GET", "/messages/{message_id:int}/confirmation"): api(obj(confirmation=ANY_OBJECT)),
    ("POST", "/messages/{message_id:int}/delete"): api(obj(deleted=array(ID))),
    ("POST", "/messages/{message_id:int}/resend"): api(SENT, request=ARCHIVE_ONLY),
}
