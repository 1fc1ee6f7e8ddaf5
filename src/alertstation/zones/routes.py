"""Routes of the zone catalog administration."""

from alertstation.context import Station
from alertstation.http.routing import SIGNED_IN, Route, permission
from alertstation.zones import resources as r
from alertstation.zones.admin import MAX_UPLOAD_BYTES

CONFIGURE = permission("system.configure")
VIEW = permission("system.view_config")


def routes(station: Station) -> list[Route]:
    """Return the zone catalog routes."""
    return [
        Route("GET", "/admin/zones", r.ZonesPage(station), VIEW, summary="Zone catalog page"),
        Route("GET", "/admin/zones/info", r.ZonesInfo(station), VIEW, summary="Catalog state"),
        Route(
            "POST",
            "/admin/zones/upload",
            r.ZonesUpload(station),
            CONFIGURE,
            summary="Upload one zone DBF, then re-sync",
            max_body=MAX_UPLOAD_BYTES + 65536,
        ),
        Route(
            "POST",
            "/admin/zones/reload",
            r.ZonesReload(station),
            CONFIGURE,
            summary="Re-sync from the resolved DBF files",
        ),
        Route("GET", "/api/zones", r.ZonesSearch(station), SIGNED_IN, summary="Search zones"),
        Route(
            "GET",
            "/api/zones/picker",
            r.ZonesPicker(station),
            SIGNED_IN,
            summary="Zones grouped by state or marine area",
        ),
        Route(
            "GET",
            "/api/zones/validate",
            r.ZonesValidate(station),
            SIGNED_IN,
            summary="Check zone codes against the catalog",
        ),
    ]
