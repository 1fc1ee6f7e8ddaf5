"""Request and response schemas of auto-forward, the weekly test and the approval queue."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    INT,
    NUMBER,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    obj,
    page,
)

FORWARD_SETTINGS = body(
    enabled=BOOL,
    station_id=STRING,
    attention_seconds=NUMBER,
    nwr_tone=BOOL,
    include_voice=BOOL,
    max_age_minutes=INT,
)
SCHEDULE_FIELDS = body(
    enabled=BOOL,
    weekday={"anyOf": [INT, STRING]},
    time_of_day=STRING,
    location_codes={"anyOf": [STRING, array(STRING)]},
    station_id=STRING,
    voice_text=STRING,
)
SCHEDULE = obj(schedule=ANY_OBJECT, next_slot=ANYTHING)
RULE_BOOK = obj(rules=array(ANY_OBJECT), default=ANY_OBJECT)
ITEM = obj(item=ANY_OBJECT)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/eas/forward"): api(obj(settings=ANY_OBJECT, queue=array(ANY_OBJECT))),
    ("PUT", "/admin/eas/forward"): api(
        obj(settings=ANY_OBJECT, changed=array(STRING)), request=FORWARD_SETTINGS
    ),
    ("GET", "/admin/eas/rwt"): api(SCHEDULE),
    ("PUT", "/admin/eas/rwt"): api(obj(changed=array(STRING)), request=SCHEDULE_FIELDS),
    ("GET", "/api/eas/forward/rules"): api(RULE_BOOK),
    ("PUT", "/api/eas/forward/rules"): api(
        obj(rules=array(ANY_OBJECT), default=ANY_OBJECT, changed=array(STRING)),
        request=body(rules=array(ANY_OBJECT), default=ANY_OBJECT),
    ),
    ("GET", "/api/eas/pending"): api(obj(items=array(ANY_OBJECT), now=TIMESTAMP)),
    ("POST", "/api/eas/pending/{item_id:int}/forward"): api(ITEM),
    ("POST", "/api/eas/pending/{item_id:int}/hold"): api(ITEM),
    ("POST", "/api/eas/pending/{item_id:int}/reject"): api(ITEM),
    ("GET", "/eas/forward"): page(),
    ("GET", "/eas/pending"): page(),
    ("POST", "/eas/rwt/test"): api(
        obj(sent=BOOL, message=ANY_OBJECT, queue=ANYTHING, voice=ANYTHING)
    ),
}
