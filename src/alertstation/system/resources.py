"""Platform resources: health check and the first pages."""

from __future__ import annotations

import falcon

from alertstation.context import Station
from alertstation.db.migrate import head_revision
from alertstation.system.service import check_health
from alertstation.version import __version__


class HealthResource:
    """Answer load balancers and operators: is the station able to serve?"""

    def __init__(self, station: Station) -> None:
        self._engine = station.engine
        self._head = head_revision(station.engine)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        health = check_health(self._engine, self._head)
        resp.media = {
            "status": "ok" if health.ok else "unavailable",
            "version": __version__,
            "database": "ok" if health.database_ok else "unreachable",
            "schema": "current" if health.schema_current else "needs migration",
        }
        resp.status = falcon.HTTP_200 if health.ok else falcon.HTTP_503


class HomePage:
    """The signed-in overview page."""

    def __init__(self, station: Station) -> None:
        self._templates = station.templates

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._templates.page(req, resp, "home.html")
