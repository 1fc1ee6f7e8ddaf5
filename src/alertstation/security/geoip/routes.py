"""Routes of the GeoIP database uploads."""

from alertstation.context import Station
from alertstation.http.routing import Route, permission
from alertstation.security.geoip import resources as r

_UPLOAD_BODY = r.MAX_UPLOAD_BYTES + 65536  # the file plus the multipart framing


def routes(station: Station) -> list[Route]:
    """Return the routes of the GeoIP database uploads."""
    return [
        Route(
            "GET",
            "/api/traffic/geoip",
            r.GeoipDatabases(station),
            permission("system.view_config"),
            summary="Installed GeoIP databases",
        ),
        Route(
            "POST",
            "/api/traffic/geoip/upload",
            r.GeoipUpload(station),
            permission("system.configure"),
            summary="Upload a GeoIP Country, City or ASN database",
            max_body=_UPLOAD_BODY,
        ),
    ]
