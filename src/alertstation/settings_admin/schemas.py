"""Request and response schemas of the saved environment routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    BOOL,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    named,
    nullable,
    obj,
    page,
)

VARIABLE = named(
    "EnvironmentVariable",
    obj(
        name=STRING,
        description=STRING,
        secret=BOOL,
        source=STRING,
        value=nullable(STRING),
        is_set=BOOL,
        saved=BOOL,
        overridden_by_environment=BOOL,
        admin_only=BOOL,
    ),
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/environment"): page(),
    ("GET", "/admin/receiver_allowlist"): page(),
    ("GET", "/api/environment/variables"): api(obj(variables=array(VARIABLE))),
    ("PUT", "/api/environment/variables"): api(
        obj(
            changed=array(STRING),
            restart_required=BOOL,
            warnings=array(obj(name=STRING, message=STRING)),
        ),
        request={
            "type": "object",
            "required": ["variables"],
            "properties": {
                "variables": {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": nullable(STRING),
                }
            },
        },
    ),
}
