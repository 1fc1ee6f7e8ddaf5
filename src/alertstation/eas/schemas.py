"""Request and response schemas of the manual EAS and archive routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    BOOL,
    ID,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    download,
    named,
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
ACTIVATION = named(
    "Activation",
    obj(
        id=ID, event=STRING, org=STRING, locations=array(STRING), state=STRING, created_at=TIMESTAMP
    ),
)
QUEUED = obj(id=ID, state=STRING)
MESSAGE = named("ArchivedMessage", obj({"queue": QUEUED}, id=ID, header=STRING, audio_url=STRING))
QUEUE_ITEM = named(
    "QueueItem", obj(id=ID, message_id=ID, state=STRING, header=STRING, archive_only=BOOL)
)
CONFIRMATION = obj(header=STRING, event_code=STRING, areas=array(STRING), outputs=array())
SENT = obj(sent=BOOL, message=MESSAGE, queue=QUEUED)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("POST", "/admin/eas/manual_generate"): api(
        obj(sent=BOOL, activation_id=ID, message=MESSAGE, queue=QUEUED),
        status=201,
        request=COMPOSITION,
        form=COMPOSITION_FORM,
    ),
    ("GET", "/eas/manual"): page(),
    ("GET", "/eas/manual/events"): api(obj(activations=array(ACTIVATION))),
    ("POST", "/eas/manual/events"): api(
        obj(activation=ACTIVATION), status=201, request=COMPOSITION, form=COMPOSITION_FORM
    ),
    ("POST", "/eas/manual/events/purge"): api(obj(purged=array(ID)), request=IDS),
    ("GET", "/eas/manual/events/{activation_id:int}/audio.wav"): download(WAV),
    ("GET", "/eas/manual/events/{activation_id:int}/confirmation"): api(
        obj(confirmation=CONFIRMATION)
    ),
    ("POST", "/eas/manual/events/{activation_id:int}/send"): api(SENT, request=ARCHIVE_ONLY),
    ("GET", "/eas/queue"): api(obj(items=array(QUEUE_ITEM), active=BOOL)),
    ("POST", "/manual/generate"): download(WAV, request=COMPOSITION),
    ("GET", "/messages"): api(obj(messages=array(MESSAGE))),
    ("POST", "/messages/purge"): api(obj(deleted=array(ID)), request=IDS),
    ("GET", "/messages/{message_id:int}/audio.wav"): download(WAV),
    ("GET", "/messages/{message_id:int}/confirmation"): api(obj(confirmation=CONFIRMATION)),
    ("POST", "/messages/{message_id:int}/delete"): api(obj(deleted=array(ID))),
    ("POST", "/messages/{message_id:int}/resend"): api(SENT, request=ARCHIVE_ONLY),
}
