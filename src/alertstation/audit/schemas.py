"""Request and response schemas of the audit log routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    BOOL,
    COUNT,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    download,
    nullable,
    obj,
    page,
)

LOG_QUERY = {"action": STRING, "limit": {"type": "integer", "minimum": 1}}

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/api/audit/verify"): api(
        obj(
            ok=BOOL,
            rows=COUNT,
            first_bad_id=nullable({"type": "integer"}),
            problem=nullable(STRING),
            summary=STRING,
        ),
        query={"checkpoint": STRING},
    ),
    ("GET", "/logs"): page(query=LOG_QUERY),
    ("GET", "/logs/export.csv"): download("text/csv", query=LOG_QUERY),
    ("GET", "/logs/export.pdf"): download("application/pdf", query=LOG_QUERY),
}
