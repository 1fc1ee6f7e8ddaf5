"""Routes of the operations.public package: the docs site, support and repository facts."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, Route, role
from alertstation.operations.public.docs import DocsGuide, DocsIndex, DocsSearch
from alertstation.operations.public.guides import GuideLibrary
from alertstation.operations.public.support import (
    DiagnosticsBundle,
    RepoStatsPage,
    SupportPage,
)


def routes(station: Station) -> list[Route]:
    """Return this package's routes."""
    library = GuideLibrary()
    return [
        Route("GET", "/docs", DocsIndex(station, library), PUBLIC, summary="Documentation"),
        Route(
            "GET",
            "/docs/search",
            DocsSearch(station, library),
            PUBLIC,
            summary="Search the guides (?q=)",
        ),
        Route("GET", "/docs/{name}", DocsGuide(station, library), PUBLIC, summary="One guide"),
        Route("GET", "/support", SupportPage(station), PUBLIC, summary="How to report a problem"),
        Route(
            "GET",
            "/support/diagnostics",
            DiagnosticsBundle(station),
            role("admin"),
            summary="Diagnostics bundle (JSON, no secrets)",
        ),
        Route(
            "GET",
            "/repo-stats",
            RepoStatsPage(station, library),
            PUBLIC,
            summary="Version, changelog excerpt, schema revision, kernel builds",
        ),
    ]
