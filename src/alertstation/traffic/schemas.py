"""Request and response schemas of the traffic analytics routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    BOOL,
    COUNT,
    INT,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    download,
    obj,
    page,
)

DASHBOARD_QUERY = {
    "days": {"type": "integer", "minimum": 1},
    "start": {"type": "string", "format": "date"},
    "end": {"type": "string", "format": "date"},
    **{name: STRING for name in ("country", "path", "status", "browser", "os", "method", "ip")},
}
DASHBOARD = obj(
    filter_meta=ANY_OBJECT,
    time_series=array(ANY_OBJECT),
    hits_by_hour=array(INT),
    hits_by_weekday=array(INT),
    summary=ANY_OBJECT,
    summary_prev=ANY_OBJECT,
    anomalies=array(ANY_OBJECT),
)
SETTINGS = obj(settings=ANY_OBJECT)
ROWS = obj(rows=COUNT)
ADDRESS = body(ip=STRING)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/traffic/dashboard"): page(),
    ("GET", "/api/traffic/anomalies"): api(obj(enabled=BOOL, anomalies=array(ANY_OBJECT))),
    ("GET", "/api/traffic/client"): RouteSchema(
        status=204,
        query={"screen": {"type": "string", "pattern": "^[0-9]{1,5}x[0-9]{1,5}$"}},
        required_query=("screen",),
    ),
    ("GET", "/api/traffic/dashboard"): api(DASHBOARD, query=DASHBOARD_QUERY),
    ("GET", "/api/traffic/dashboard.csv"): download("text/csv", query=DASHBOARD_QUERY),
    ("POST", "/api/traffic/privacy/anonymize"): api(ROWS, request=ADDRESS),
    ("POST", "/api/traffic/privacy/purge"): api(ROWS, request=ADDRESS),
    ("POST", "/api/traffic/purge-all"): api(ROWS),
    ("GET", "/api/traffic/settings"): api(SETTINGS),
    ("PUT", "/api/traffic/settings"): api(
        obj(settings=ANY_OBJECT, changed=array(STRING)),
        request=body(
            enabled=BOOL,
            retention_days=INT,
            log_api_requests=BOOL,
            authenticated_only=BOOL,
            exclude_bots=BOOL,
            exclude_internal=BOOL,
            skip_paths={"anyOf": [STRING, array(STRING)]},
            anonymize_ip=BOOL,
            resolve_hostnames=BOOL,
            dashboard_cache=BOOL,
            anomaly_detection_enabled=BOOL,
        ),
    ),
}
