"""Request and response schemas of the GeoIP database routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    BOOL,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    obj,
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/api/traffic/geoip"): api(
        obj(databases=ANY_OBJECT, reader_available=BOOL, paths=ANY_OBJECT)
    ),
    ("POST", "/api/traffic/geoip/upload"): api(
        obj(
            {"note": STRING},
            type=STRING,
            slot=STRING,
            database=ANY_OBJECT,
            validated_with_reader=BOOL,
        ),
        status=201,
        form=obj(file={"type": "string", "contentMediaType": "application/octet-stream"}),
    ),
}
