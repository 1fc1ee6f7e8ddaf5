"""A bare Falcon app with the two benchmarked routes: no middleware, no registry, no logging."""

from __future__ import annotations

import falcon

from benchmarks.http.peer_data import AlertsPage, BroadcastDocument, engine_from_env, page_args


class BroadcastState:
    def __init__(self, document: BroadcastDocument) -> None:
        self._document = document

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self._document.state()
        resp.set_header("Cache-Control", "no-store")


class Alerts:
    def __init__(self, pages: AlertsPage) -> None:
        self._pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        limit, offset = page_args(req.get_param("limit"), req.get_param("offset"))
        resp.media = self._pages.page(limit, offset)


def create_app() -> falcon.App:
    """Return the bare Falcon app on the database named by ``BENCH_DATABASE_URL``."""
    engine = engine_from_env()
    app = falcon.App()
    app.add_route("/api/broadcast/state", BroadcastState(BroadcastDocument(engine)))
    app.add_route("/api/alerts", Alerts(AlertsPage(engine)))
    return app
