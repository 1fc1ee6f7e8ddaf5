"""Request and response schemas of the public pages (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    NUMBER,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    obj,
    page,
)

SEARCH_HIT = obj(name=STRING, title=STRING, url=STRING, score=NUMBER, snippet=STRING)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/docs"): page(),
    ("GET", "/docs/search"): api(
        obj(query=STRING, results=array(SEARCH_HIT)), query={"q": STRING}, also=("text/html",)
    ),
    ("GET", "/docs/{name}"): RouteSchema(media=("text/html",), responses={301: None}),
    ("GET", "/repo-stats"): page(),
    ("GET", "/support"): page(),
    ("GET", "/support/diagnostics"): api(
        obj(
            generated_at=TIMESTAMP,
            versions=ANY_OBJECT,
            database=ANY_OBJECT,
            settings=ANY_OBJECT,
            recent_errors=array(ANY_OBJECT),
        )
    ),
}
