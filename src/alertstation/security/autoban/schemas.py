"""Request and response schemas of the automatic-ban settings (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    obj,
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/security/autoban"): api(
        obj(settings=ANY_OBJECT, labels=ANY_OBJECT, limits=ANY_OBJECT)
    ),
    ("PUT", "/admin/security/autoban"): api(
        obj(settings=ANY_OBJECT, changed=array(STRING)),
        request=body(retention_days={"type": "integer"}, detectors=ANY_OBJECT),
    ),
}
