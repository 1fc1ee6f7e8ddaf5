"""Request and response schemas of this package's routes (see alertstation.http.openapi)."""

from alertstation.http.openapi import RouteKey, RouteSchema

SCHEMAS: dict[RouteKey, RouteSchema] = {}
