"""Platform resources: health check and the first pages."""

from __future__ import annotations

import falcon

from alertstation.context import Station
from alertstation.db.migrate import shipped_head
from alertstation.system.home import home_overview
from alertstation.system.service import check_health
from alertstation.version import __version__


class HealthResource:
    """Answer load balancers and operators: is the station able to serve?"""

    def __init__(self, station: Station) -> None:
        self._engine = station.engine
        self._head = shipped_head()

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
    """GET /: the signed-in overview: area alerts, sources, audio, EAS messages, checklist."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        now = self._station.clock()
        overview = home_overview(self._station, now)
        self._station.templates.page(req, resp, "home.html", overview=overview, now=now)
