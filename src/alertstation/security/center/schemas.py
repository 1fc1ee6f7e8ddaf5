"""Request and response schemas of the Security Center routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    COUNT,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    obj,
    page,
    redirect,
)

DAYS = {"days": {"enum": ["1", "7"]}}
WINDOW = {"days": COUNT, "since": TIMESTAMP, "until": TIMESTAMP, "total": COUNT}

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/security/center"): page(query={"tab": STRING, **DAYS}),
    ("GET", "/security/center/logins"): api(
        obj(
            **WINDOW,
            addresses=COUNT,
            by_address=array(ANY_OBJECT),
            recent=array(ANY_OBJECT),
            recent_limit=COUNT,
        ),
        query=DAYS,
    ),
    ("GET", "/security/center/traffic"): api(
        obj(
            **WINDOW,
            addresses=COUNT,
            kinds=ANY_OBJECT,
            hours=array(ANY_OBJECT),
            top_addresses=array(ANY_OBJECT),
            recent=array(ANY_OBJECT),
            recent_limit=COUNT,
        ),
        query=DAYS,
    ),
    ("GET", "/security/malicious-logins"): redirect(301),
    ("GET", "/traffic"): redirect(301),
    ("GET", "/security/overview"): api(
        obj(generated_at=TIMESTAMP, enforcement=ANY_OBJECT, metrics=ANY_OBJECT, viewer=ANY_OBJECT)
    ),
}
