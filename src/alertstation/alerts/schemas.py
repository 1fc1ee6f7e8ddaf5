"""Request and response schemas of the alert routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    COUNT,
    ID,
    INT,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    named,
    nullable,
    obj,
    page,
)

TEXT = nullable(STRING)
ALERT = named(
    "Alert",
    obj(
        {"match": ANY_OBJECT, "vtec": ANYTHING},
        id=ID,
        identifier=STRING,
        sender=TEXT,
        sent=nullable(TIMESTAMP),
        event=TEXT,
        event_code=TEXT,
        headline=TEXT,
        area_desc=TEXT,
        severity=TEXT,
        state=STRING,
        expires=nullable(TIMESTAMP),
        cancelled_at=nullable(TIMESTAMP),
        codes=array(STRING),
        remaining_codes=array(STRING),
        in_area=BOOL,
        signature_status=TEXT,
        signature_reason=TEXT,
    ),
)
ALERT_QUERY = {
    "status": STRING,
    "state": STRING,
    "severity": STRING,
    "event": STRING,
    "code": STRING,
    "area": STRING,
    "since": STRING,
    "sort": STRING,
    "limit": {"type": "integer", "minimum": 1},
    "offset": {"type": "integer", "minimum": 0},
}
CODES = {"anyOf": [STRING, array(STRING)], "description": "Codes as a list or comma-separated"}
SETTINGS_SAVED = obj(
    saved=ANY_OBJECT, changed=array(STRING), warnings=obj(unknown=array(STRING)), rematched=ANYTHING
)
LOCATION = body(zone_codes=CODES)
FILTERING = body(storage_zone_codes=CODES, forward_events=CODES)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/alert_filtering"): page(),
    ("POST", "/admin/alert_filtering"): api(
        SETTINGS_SAVED, request=FILTERING, urlencoded=FILTERING, responses={303: None}
    ),
    ("GET", "/admin/location_settings"): page(),
    ("POST", "/admin/location_settings"): api(
        SETTINGS_SAVED, request=LOCATION, urlencoded=LOCATION, responses={303: None}
    ),
    ("DELETE", "/admin/alerts/{alert_id:int}"): api(obj(deleted=array(ID))),
    ("PATCH", "/admin/alerts/{alert_id:int}"): api(
        ALERT, request=body(expires=nullable(STRING), state=STRING, reason=STRING)
    ),
    ("POST", "/admin/clear_expired"): api(
        obj(deleted=COUNT, days=INT),
        request=body(days={"type": "integer", "minimum": 0, "maximum": 36500}),
    ),
    ("POST", "/admin/mark_expired"): api(obj(expired=COUNT)),
    ("GET", "/alerts"): page(query=ALERT_QUERY),
    ("GET", "/alerts/history"): page(query=ALERT_QUERY),
    ("GET", "/alerts/{alert_id:int}"): page(),
    ("GET", "/api/alerts"): api(
        obj(total=COUNT, limit=COUNT, offset=COUNT, alerts=array(ALERT)), query=ALERT_QUERY
    ),
    ("GET", "/api/alerts/{alert_id:int}"): api(ALERT),
    ("GET", "/api/alerts/area/check"): api(
        obj(valid=array(STRING), invalid=array(), known=array(), unknown=array(STRING)),
        query={"codes": STRING},
    ),
    ("GET", "/api/broadcast/state"): api(
        obj(
            active=BOOL,
            active_alerts=COUNT,
            in_area_alerts=COUNT,
            airing=BOOL,
            on_air=BOOL,
            now_airing=ANYTHING,
            generation=INT,
            timestamp=TIMESTAMP,
            stale=BOOL,
        )
    ),
}
