"""Request and response schemas of the ban list and allowlist routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    BOOL,
    ID,
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
)

FILTER = named(
    "IpFilter",
    obj(
        {"location": ANY_OBJECT},
        id=ID,
        value=STRING,
        kind=STRING,
        active=BOOL,
        expired=BOOL,
        enforced=BOOL,
        is_range=BOOL,
        expires_at=nullable(TIMESTAMP),
        created_at=nullable(TIMESTAMP),
        reason=nullable(STRING),
        description=nullable(STRING),
        source=nullable(STRING),
    ),
)
FILTER_FIELDS = {
    "value": STRING,
    "kind": {"enum": ["blocklist", "allowlist"]},
    "active": BOOL,
    "expires_at": nullable(STRING),
    "duration_minutes": nullable({"type": "integer"}),
    "reason": nullable(STRING),
    "description": nullable(STRING),
    "source": STRING,
    "confirm_lockout": BOOL,
}

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/security/ip-filters"): api(
        obj(filters=array(FILTER), allowlist_mode=BOOL, client_ip=STRING),
        query={"kind": STRING},
    ),
    ("POST", "/security/ip-filters"): api(
        obj(filter=FILTER), status=201, request=body(**FILTER_FIELDS)
    ),
    ("DELETE", "/security/ip-filters/{id:int}"): api(
        obj(deleted=ID), request=body(confirm_lockout=BOOL)
    ),
    ("PATCH", "/security/ip-filters/{id:int}"): api(
        obj(filter=FILTER, changed=array(STRING)), request=body(**FILTER_FIELDS)
    ),
}
