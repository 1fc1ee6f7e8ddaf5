"""Request and response schemas of the audio source routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    COUNT,
    ID,
    NUMBER,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    download,
    file_with_ranges,
    named,
    nullable,
    obj,
    page,
    paginated,
)

SOURCE = named(
    "AudioSource",
    obj(
        {"preflight": ANY_OBJECT},
        id=ID,
        name=STRING,
        kind=STRING,
        enabled=BOOL,
        state=nullable(STRING),
        last_audio_at=nullable(TIMESTAMP),
    ),
)
SOURCE_FIELDS = body(
    name=STRING,
    kind={"enum": ["stream", "receiver"]},
    url=STRING,
    command={"anyOf": [STRING, array(STRING)]},
    device_params=ANY_OBJECT,
    enabled=BOOL,
    relay_enabled=BOOL,
    skip_url_check=BOOL,
)
CHANGED = obj(changed=array(STRING))
SOURCE_LIST = obj(items=array(ANY_OBJECT))
DELETED = obj(deleted=ID, name=STRING)
PAGE = {
    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    "offset": {"type": "integer", "minimum": 0},
}
AUDIO_ALERT = obj(id=ID, changed=BOOL)
RECEIVED_ACTION = obj(id=ID)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/audio"): page(),
    ("GET", "/audio/alerts"): page(),
    ("GET", "/eas/received"): page(),
    ("GET", "/api/audio/alerts"): api(
        paginated("items", ANY_OBJECT, state=STRING),
        query={"state": {"enum": ["open", "resolved", "all"]}, **PAGE},
    ),
    ("POST", "/api/audio/alerts/resolve-all"): api(obj(resolved=COUNT)),
    ("POST", "/api/audio/alerts/{alert_id:int}/acknowledge"): api(AUDIO_ALERT),
    ("POST", "/api/audio/alerts/{alert_id:int}/resolve"): api(AUDIO_ALERT),
    ("GET", "/api/audio/settings"): api(
        obj(eas_monitor_enabled=BOOL, relay_excluded_events=array(STRING))
    ),
    ("PUT", "/api/audio/settings"): api(
        CHANGED,
        request=body(
            eas_monitor_enabled=BOOL,
            relay_excluded_events=array(STRING),
            silence_threshold_dbfs=NUMBER,
            silence_seconds=NUMBER,
            silence_hysteresis_db=NUMBER,
            clipping_samples={"type": "integer"},
            source_down_after_seconds=NUMBER,
            archive_enabled=BOOL,
            archive_segment_minutes={"type": "integer"},
            archive_retention_days={"type": "integer"},
            archive_profile=STRING,
        ),
    ),
    ("GET", "/api/audio/sources"): api(SOURCE_LIST),
    ("POST", "/api/audio/sources"): api(SOURCE, status=201, request=SOURCE_FIELDS),
    ("POST", "/api/audio/sources/test-stream"): api(
        ANY_OBJECT, request=body(id=ID, url=STRING, device_params=ANY_OBJECT)
    ),
    ("GET", "/api/audio/sources/{source_id:int}"): api(SOURCE),
    ("PUT", "/api/audio/sources/{source_id:int}"): api(CHANGED, request=SOURCE_FIELDS),
    ("DELETE", "/api/audio/sources/{source_id:int}"): api(DELETED),
    ("POST", "/api/audio/sources/{source_id:int}/restart"): api(SOURCE, status=202),
    ("GET", "/api/audio/sources/{source_id:int}/archive"): api(
        obj(
            source_id=ID,
            archive_enabled=BOOL,
            archive_profile=ANY_OBJECT,
            archive_error=nullable(STRING),
            archive_failures=ANYTHING,
            items=array(ANY_OBJECT),
        )
    ),
    ("GET", "/api/audio/sources/{source_id:int}/archive/{name}"): file_with_ranges(
        "audio/mpeg", "audio/ogg"
    ),
    ("DELETE", "/api/audio/sources/{source_id:int}/archive/{name}"): api(
        obj(deleted=STRING, source_id=ID)
    ),
    ("GET", "/api/eas/received"): api(paginated("items"), query=PAGE),
    ("GET", "/api/eas/received/refused"): api(obj(items=array(ANY_OBJECT))),
    ("POST", "/api/eas/received/{message_id:int}/acknowledge"): api(RECEIVED_ACTION),
    ("GET", "/api/eas/received/{message_id:int}/audio"): download("audio/wav"),
    ("POST", "/api/eas/received/{message_id:int}/forward"): api(ANY_OBJECT),
    ("GET", "/api/radio/receivers"): api(SOURCE_LIST),
    ("POST", "/api/radio/receivers"): api(SOURCE, status=201, request=SOURCE_FIELDS),
    ("GET", "/api/radio/receivers/{source_id:int}"): api(SOURCE),
    ("PUT", "/api/radio/receivers/{source_id:int}"): api(CHANGED, request=SOURCE_FIELDS),
    ("DELETE", "/api/radio/receivers/{source_id:int}"): api(DELETED),
    ("POST", "/api/radio/receivers/{source_id:int}/restart"): api(SOURCE, status=202),
    ("GET", "/api/radio/receivers/{source_id:int}/diagnostics"): api(
        obj(
            id=ID,
            name=STRING,
            program=STRING,
            on_allowlist=BOOL,
            command_allowed=ANYTHING,
            allowlist=array(STRING),
            program_executable=BOOL,
            last_audio_at=nullable(TIMESTAMP),
        )
    ),
}
