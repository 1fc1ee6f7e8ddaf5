"""The documentation site: ``/docs``, ``/docs/{name}`` and ``/docs/search``, all public.

It serves the operator guides; a guide name the station once served redirects to the guide that
replaced it.
"""

from __future__ import annotations

import falcon

from alertstation.context import Station
from alertstation.errors import NotFound
from alertstation.operations.public.guides import MAX_QUERY_CHARS, GuideLibrary


def _prefers_json(req: falcon.Request) -> bool:
    return req.client_prefers([falcon.MEDIA_HTML, falcon.MEDIA_JSON]) == falcon.MEDIA_JSON


class DocsIndex:
    """GET /docs: the tasks in order, then the theory pages, with a search box."""

    def __init__(self, station: Station, library: GuideLibrary) -> None:
        self._templates = station.templates
        self._library = library

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        guides = self._library.guides()
        self._templates.page(
            req,
            resp,
            "docs.html",
            theory=[g for g in guides if g.is_theory],
            guides=[g for g in guides if not g.is_theory],
            max_query=MAX_QUERY_CHARS,
        )


class DocsGuide:
    """GET /docs/{name}: one guide rendered from its Markdown file."""

    def __init__(self, station: Station, library: GuideLibrary) -> None:
        self._templates = station.templates
        self._library = library

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        try:
            guide = self._library.get(name)
        except NotFound:
            moved = self._library.moved(name)
            if moved is None:
                raise
            raise falcon.HTTPMovedPermanently(f"/docs/{moved}") from None
        self._templates.page(
            req,
            resp,
            "docs_guide.html",
            guide=guide,
            body=self._library.html(name),
            max_query=MAX_QUERY_CHARS,
        )


class DocsSearch:
    """GET /docs/search?q=: the guides holding every word of the query (HTML or JSON)."""

    def __init__(self, station: Station, library: GuideLibrary) -> None:
        self._templates = station.templates
        self._library = library

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        query = req.get_param("q", default="") or ""
        hits = self._library.search(query)
        if _prefers_json(req):
            resp.media = {
                "query": query,
                "results": [
                    {
                        "name": hit.guide.name,
                        "title": hit.guide.title,
                        "url": f"/docs/{hit.guide.name}",
                        "score": hit.score,
                        "snippet": hit.snippet,
                    }
                    for hit in hits
                ],
            }
            return
        self._templates.page(
            req, resp, "docs_search.html", query=query, hits=hits, max_query=MAX_QUERY_CHARS
        )
