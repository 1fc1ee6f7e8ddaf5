"""Request and response schemas of the platform's routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    COUNT,
    INT,
    STRING,
    TIMESTAMP,
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

HEALTH = obj(status={"enum": ["ok", "unavailable"]}, version=STRING, database=STRING, schema=STRING)
RECALCULATION = ANY_OBJECT
BOUNDARY = obj(boundary=nullable(ANY_OBJECT), match_polygons=BOOL, geometry_matches=COUNT)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/healthz"): api(HEALTH, responses={503: HEALTH}),
    ("GET", "/"): page(),
    ("GET", "/api/system_status"): api(
        obj(
            version=STRING,
            database=STRING,
            schema=STRING,
            zone_catalog_size=COUNT,
            active_alerts=COUNT,
            worker_heartbeat=ANYTHING,
            worker_supervisor=ANYTHING,
            sources=ANYTHING,
            certificate=ANYTHING,
        )
    ),
    ("GET", "/status"): page(),
    ("GET", "/api/fips/counties"): api(
        obj(
            {
                "states": array(ANY_OBJECT),
                "state": ANY_OBJECT,
                "counties": array(ANY_OBJECT),
                "whole_state": STRING,
            },
            parts=ANY_OBJECT,
        ),
        query={"state": {"type": "string", "description": "Two-digit state FIPS code"}},
    ),
    ("GET", "/admin/boundary"): page(),
    ("GET", "/admin/boundary/preview.svg"): download("image/svg+xml"),
    ("GET", "/api/boundary"): api(BOUNDARY),
    ("POST", "/api/boundary"): api(
        obj(recalculated=RECALCULATION, name=STRING),
        status=201,
        form=obj(file={"type": "string", "contentMediaType": "application/geo+json"}),
    ),
    ("DELETE", "/api/boundary"): api(obj(cleared=BOOL, recalculated=nullable(RECALCULATION))),
    ("PUT", "/api/boundary"): api(
        obj(match_polygons=BOOL, changed=array(STRING)),
        request={
            "type": "object",
            "required": ["match_polygons"],
            "properties": {"match_polygons": BOOL},
            "additionalProperties": False,
        },
    ),
    ("POST", "/api/boundary/recalculate"): api(RECALCULATION),
}

_ = (INT, TIMESTAMP, body)
