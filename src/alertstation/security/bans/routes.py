"""Routes of the ban list and the Security Center."""

from alertstation.context import Station
from alertstation.http.routing import SIGNED_IN, Route, permission
from alertstation.security.bans import resources as r

MANAGE = permission("system.manage_users")


def routes(station: Station) -> list[Route]:
    """Return the security routes."""
    collection = r.IpFilterCollection(station)
    item = r.IpFilterItem(station)
    return [
        Route(
            "GET",
            "/security/ip-filters",
            collection,
            SIGNED_IN,
            summary="Ban list and allowlist entries",
        ),
        Route("POST", "/security/ip-filters", collection, MANAGE, summary="Add a ban list entry"),
        Route(
            "PATCH",
            "/security/ip-filters/{id:int}",
            item,
            MANAGE,
            summary="Toggle or edit a ban list entry",
        ),
        Route(
            "DELETE",
            "/security/ip-filters/{id:int}",
            item,
            MANAGE,
            summary="Remove a ban list entry",
        ),
    ]
