"""Routes of the Security Center: the page, its read-only data, the legacy redirects."""

from alertstation.context import Station
from alertstation.http.routing import SIGNED_IN, Route
from alertstation.security.center import resources as r


def routes(station: Station) -> list[Route]:
    """Return the Security Center routes (all read-only; changes go to the ban list routes)."""
    return [
        Route(
            "GET",
            "/security/center",
            r.SecurityCenterPage(station),
            SIGNED_IN,
            summary="Security Center: Traffic, Malicious Logins, Banned IPs, Host Firewall",
        ),
        Route(
            "GET",
            "/security/overview",
            r.SecurityOverview(station),
            SIGNED_IN,
            summary="Enforcement status and security metrics",
        ),
        Route(
            "GET",
            "/security/center/traffic",
            r.SecurityTraffic(station),
            SIGNED_IN,
            summary="Security events per hour, top addresses and recent events",
        ),
        Route(
            "GET",
            "/security/center/logins",
            r.SecurityFailedLogins(station),
            SIGNED_IN,
            summary="Failed sign-ins, per address, with their ban state",
        ),
        Route(
            "GET",
            "/security/malicious-logins",
            r.LegacyRedirect("malicious-logins"),
            SIGNED_IN,
            summary="Moved: the Security Center's Malicious Logins tab",
        ),
        Route(
            "GET",
            "/traffic",
            r.LegacyRedirect("traffic"),
            SIGNED_IN,
            summary="Moved: the Security Center's Traffic tab",
        ),
    ]
