"""Routes of the operations.public package: the docs site, support and repository facts."""

from alertstation.context import Station
from alertstation.http.routing import PUBLIC, Route
from alertstation.operations.public.docs import DocsGuide, DocsIndex, DocsSearch
from alertstation.operations.public.guides import GuideLibrary


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
    ]
