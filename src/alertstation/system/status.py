"""The system status: the public API (``/api/system_status``) and the signed-in status page.

It gathers what the layers below know: version, database and schema health, zone catalog size,
the active alert count (from the broadcast snapshot), the worker's heartbeat and supervisor, the
health of every poll source, the TLS certificate's expiry (a warning 14 days ahead) and the
request rows the traffic recorders of every process had to drop (counted in the database).
"""

from __future__ import annotations

from typing import Any

import falcon
from sqlalchemy.exc import SQLAlchemyError

from alertstation.alerts.poll.sources import health_of, list_sources, public_health, url_host
from alertstation.context import Station
from alertstation.db.migrate import shipped_head
from alertstation.operations.certificate import certificate_status
from alertstation.system.service import check_health
from alertstation.traffic.recorder import dropped_rows
from alertstation.version import __version__
from alertstation.worker.heartbeat import read_heartbeat
from alertstation.worker.supervisor import read_state as read_supervisor


class SystemStatusApi:
    """GET /api/system_status: version, database, schema, catalog size, alerts, poll sources."""

    def __init__(self, station: Station) -> None:
        self._station = station
        self._broadcast = station.broadcast
        self._head = shipped_head()

    def status(self) -> dict[str, Any]:
        """Return the system status as JSON-ready data (the status page shows the same)."""
        health = check_health(self._station.engine, self._head)
        active = self._broadcast.counts()[0] if health.database_ok else None
        sources = worker = None
        catalog_size = 0
        if health.database_ok and health.schema_current:
            now = self._station.clock()
            with self._station.engine.connect() as conn:
                sources = [public_health(row, now) for row in list_sources(conn)]
                worker = read_heartbeat(conn, now)
            catalog_size = len(self._station.zones.index().zones)
        return {
            "version": __version__,
            "database": "ok" if health.database_ok else "unreachable",
            "schema": "current" if health.schema_current else "needs migration",
            "zone_catalog_size": catalog_size,
            "active_alerts": active,
            "worker_heartbeat": worker,
            "worker_supervisor": read_supervisor(self._station.settings.data_dir),
            "sources": sources,
            "certificate": certificate_status(
                self._station.settings.data_dir, self._station.clock()
            ),
            "traffic_rows_dropped": self._dropped_rows(health.database_ok),
        }

    def _dropped_rows(self, database_ok: bool) -> int:
        """The request rows every process's recorder dropped (this process's alone while the
        database cannot be read)."""
        if database_ok:
            try:
                with self._station.engine.connect() as conn:
                    return dropped_rows(conn)
            except SQLAlchemyError:
                pass
        return dropped_rows(None)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.status()
        resp.set_header("Cache-Control", "no-store")


class StatusPage:
    """GET /status: system status and the health of every poll source."""

    def __init__(self, station: Station, system: SystemStatusApi) -> None:
        self._station = station
        self._system = system

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        status = self._system.status()
        now = station.clock()
        rows: list[Any] = []
        if status["database"] == "ok":
            with station.engine.connect() as conn:
                rows = list_sources(conn)
        sources = [
            {"row": row, "host": url_host(row.url), "health": health_of(row, now)} for row in rows
        ]
        station.templates.page(req, resp, "status.html", status=status, sources=sources, now=now)
