"""Request and response schemas of the zone catalog routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    COUNT,
    INT,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    obj,
    page,
)

REPORT = ANY_OBJECT
CODES_CHECK = obj(
    valid=array(STRING),
    invalid=array(),
    known=array(obj(code=STRING)),
    unknown=array(STRING),
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/zones"): page(),
    ("GET", "/admin/zones/info"): api(
        obj(families=array(obj(family=STRING)), cache_size=COUNT, generation=INT)
    ),
    ("POST", "/admin/zones/reload"): api(REPORT),
    ("POST", "/admin/zones/upload"): api(
        obj(saved=STRING, family=STRING),
        status=201,
        form=obj(file={"type": "string", "contentMediaType": "application/octet-stream"}),
    ),
    ("GET", "/api/zones"): api(
        obj(total=COUNT, zones=array(ANY_OBJECT)),
        query={
            "q": STRING,
            "type": STRING,
            "state": STRING,
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
            "offset": {"type": "integer", "minimum": 0},
        },
    ),
    ("GET", "/api/zones/picker"): api(
        obj(groups=array(ANY_OBJECT)), query={"family": {"enum": ["land", "marine"]}}
    ),
    ("GET", "/api/zones/validate"): api(CODES_CHECK, query={"codes": STRING}),
}
