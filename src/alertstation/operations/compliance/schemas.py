"""Request and response schemas of the monitoring compliance routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ID,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    obj,
    page,
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/eas/compliance"): page(),
    ("GET", "/api/eas/compliance"): api(
        obj(
            settings=ANY_OBJECT,
            sources=array(ANY_OBJECT),
            station_tests=ANY_OBJECT,
            rmt_deadlines=array(ANY_OBJECT),
            alarms=array(ANY_OBJECT),
        )
    ),
    ("PUT", "/api/eas/compliance/settings"): api(
        obj(settings=ANY_OBJECT, changed=array(STRING)),
        request=body(silence_days={"type": "integer"}, assigned_sources=array(ID)),
    ),
}
