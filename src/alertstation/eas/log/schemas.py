"""Request and response schemas of the EAS station log routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ID,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    download,
    obj,
    page,
)

MONTH = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$", "examples": ["2026-11"]}
LOG_QUERY = {"month": MONTH, "kind": STRING, "source": STRING, "event": STRING}
ENTRY = obj(entry=obj(id=ID))

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/api/eas/log"): api(
        obj(
            month=STRING,
            time_zone=STRING,
            start=TIMESTAMP,
            end=TIMESTAMP,
            items=array(ANY_OBJECT),
            reviews=array(ANY_OBJECT),
        ),
        query=LOG_QUERY,
    ),
    ("POST", "/api/eas/log/corrections"): api(
        ENTRY,
        status=201,
        request=body(corrects=ID, text=STRING, correction=STRING, corrected_kind=STRING),
    ),
    ("POST", "/api/eas/log/notes"): api(
        ENTRY,
        status=201,
        request=body(topic=STRING, text=STRING, source=STRING, occurred_at=STRING),
    ),
    ("POST", "/api/eas/log/reviews"): api(
        ENTRY,
        status=201,
        request=body(period=STRING, month=MONTH, week_start=STRING, note=STRING),
    ),
    ("GET", "/eas/log"): page(query=LOG_QUERY),
    ("GET", "/eas/log/export.csv"): download("text/csv", query={"month": MONTH}),
    ("GET", "/eas/log/export.pdf"): download("application/pdf", query={"month": MONTH}),
}
