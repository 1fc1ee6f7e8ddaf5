"""Request and response schemas of the alert feed routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    BOOL,
    COUNT,
    ID,
    STRING,
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

SOURCE = named(
    "PollSource",
    obj(
        url=STRING,
        url_has_credentials=BOOL,
        area=array(STRING),
        zones=array(STRING),
        interval_seconds={"type": "number"},
        conditional=ANY_OBJECT,
    ),
)
SOURCE_FIELDS = body(
    name=STRING,
    kind={"enum": ["json-api", "cap-xml", "ipaws"]},
    url=STRING,
    enabled=BOOL,
    area={"anyOf": [STRING, array(STRING)]},
    zones={"anyOf": [STRING, array(STRING)]},
    interval_seconds={"type": "number"},
    connect_timeout={"type": "number"},
    read_timeout={"type": "number"},
)
FILE = {"type": "string", "contentMediaType": "application/octet-stream"}

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/poller"): page(),
    ("GET", "/admin/poller/sources"): api(obj(sources=array(SOURCE))),
    ("POST", "/admin/poller/sources"): api(SOURCE, status=201, request=SOURCE_FIELDS),
    ("PUT", "/admin/poller/sources/{source_id:int}"): api(
        obj(changed=array(STRING)), request=SOURCE_FIELDS
    ),
    # The feed form sent without script: 303 back to the page, or the page again (422) with
    # each refusal beside its field.
    ("POST", "/admin/poller/sources/{source_id:int}"): RouteSchema(
        status=303, urlencoded=SOURCE_FIELDS, responses={422: None}
    ),
    ("DELETE", "/admin/poller/sources/{source_id:int}"): api(obj(deleted=ID, name=STRING)),
    ("POST", "/admin/trigger_poll"): api(
        obj({"note": STRING}, polled=COUNT, failed=COUNT, stored=COUNT, sources=array(ANY_OBJECT))
    ),
    ("POST", "/admin/import_alert"): api(
        obj(
            file=STRING,
            stored=COUNT,
            alerts=array(
                obj(
                    identifier=nullable(STRING),
                    outcome=STRING,
                    alert_id=nullable(ID),
                    in_area=BOOL,
                    area=STRING,
                )
            ),
            skipped=array(obj(source=STRING, reason=STRING)),
        ),
        form=obj(file=FILE),
        request={"description": "A CAP JSON alert or feed, sent as the body"},
        raw=(
            "application/xml",
            "text/xml",
            "application/cap+xml",
            "application/atom+xml",
            "application/geo+json",
            "application/octet-stream",
        ),
        responses={303: None},
    ),
}
