"""Routes of the host firewall bridge (role admin only)."""

from alertstation.context import Station
from alertstation.http.routing import Route, role
from alertstation.security.hostban import resources as r

ADMIN = role("admin")


def routes(station: Station) -> list[Route]:
    """Return the host firewall bridge routes."""
    return [
        Route(
            "GET",
            "/admin/hostban/status",
            r.HostbanStatus(station),
            ADMIN,
            summary="Host firewall bridge status",
        ),
        Route(
            "POST",
            "/admin/hostban/configure",
            r.HostbanConfigure(station),
            ADMIN,
            summary="Save and apply the host-ban settings",
        ),
        Route(
            "POST",
            "/admin/hostban/resync",
            r.HostbanResync(station),
            ADMIN,
            summary="Re-push application bans and import SSH bans",
        ),
        Route(
            "POST",
            "/admin/hostban/service",
            r.HostbanService(station),
            ADMIN,
            summary="Start, stop or restart the fail2ban daemon",
        ),
        Route(
            "POST",
            "/admin/hostban/ssh-unban",
            r.HostbanSshUnban(station),
            ADMIN,
            summary="Lift an SSH jail ban",
        ),
    ]
