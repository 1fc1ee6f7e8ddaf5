"""Traffic resources: settings, dashboard data, anomalies and the privacy tools."""

from __future__ import annotations

import re
from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.bodies import json_object
from alertstation.http.demo import is_demo, mask_for_demo
from alertstation.traffic import (
    addresses,
    anomalies,
    export,
    period,
    privacy,
    reports,
    rollups,
    settings,
)
from alertstation.traffic.cache import DashboardCache, rows_token
from alertstation.traffic.recorder import flush_all


class TrafficSettingsResource:
    """GET/PUT /api/traffic/settings: every traffic analytics setting.

    PUT takes any subset of the GET form's ``settings``; the change is saved with a
    ``config.updated`` row (section ``traffic``, the changed fields with old and new values) and
    applies in every process within about a second (in this one at once).
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._station.engine.connect() as conn:
            current = settings.load_settings(conn)
        resp.media = {"settings": current.as_dict()}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_object(req)
        station = self._station
        with begin_write(station.engine) as conn:
            before = settings.load_settings(conn)
            saved, changed = settings.save_settings(conn, body, station.clock())
            station.ledger.record_config_update(
                conn,
                Actor.from_request(req),
                settings.SECTION,
                changed,
                before=before.as_dict(),
                after=saved.as_dict(),
            )
        settings.settings_cache_for(station.engine).clear()
        resp.media = {"settings": saved.as_dict(), "changed": changed}


def _query(req: falcon.Request) -> dict[str, str]:
    """Return the query parameters, each given once (a repeated one is refused)."""
    params: dict[str, str] = {}
    for name, value in req.params.items():
        if isinstance(value, list):
            raise Invalid(f"{name} is given more than once", field=name)
        params[name] = value
    return params


class TrafficDashboard:
    """GET /api/traffic/dashboard?days=N or ?start=YYYY-MM-DD&end=YYYY-MM-DD, plus filters.

    With the ``dashboard_cache`` setting on, a payload is reused for 30 seconds while no row
    changed (``alertstation.traffic.cache``).
    """

    def __init__(self, station: Station, cache: DashboardCache | None = None) -> None:
        self._station = station
        self.cache = cache if cache is not None else DashboardCache()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.payload(req)

    def payload(self, req: falcon.Request) -> dict[str, Any]:
        """Return the dashboard payload the request's period and filters ask for."""
        params = _query(req)
        now = self._station.clock()
        current = period.parse_period(params, now.date())
        chosen = period.parse_filters(params)
        engine = self._station.engine
        use_cache = settings.settings_cache_for(engine).get().dashboard_cache
        rollups.ensure_rolled_up(engine, now)
        with engine.connect() as conn:
            key = (current, chosen)
            token = rows_token(conn) if use_cache else None
            payload = self.cache.get(key, token) if use_cache else None
            if payload is None:
                payload = reports.dashboard(conn, current, chosen)
                payload["anomalies"] = anomalies.detect(
                    conn, settings.settings_cache_for(engine).get(), now
                )
                if use_cache:
                    self.cache.put(key, token, payload)
        return payload


class TrafficDashboardCsv:
    """GET /api/traffic/dashboard.csv with the dashboard's query: the dashboard as CSV."""

    def __init__(self, dashboard: TrafficDashboard) -> None:
        self._dashboard = dashboard

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        payload = self._dashboard.payload(req)
        if is_demo(req):
            payload = mask_for_demo(payload)
        meta = payload["filter_meta"]["period"]
        # A filtered export says so in its file name too (the filters themselves are in its
        # first section: values such as paths do not belong in a header).
        filtered = "_filtered" if any(payload["filter_meta"]["filters"].values()) else ""
        resp.content_type = "text/csv; charset=utf-8"
        resp.set_header(
            "Content-Disposition",
            f'attachment; filename="traffic_{meta["start"]}_{meta["end"]}{filtered}.csv"',
        )
        resp.text = export.dashboard_csv(payload)


class TrafficAnomalies:
    """GET /api/traffic/anomalies: the anomalies of the last hour."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        engine = self._station.engine
        current = settings.settings_cache_for(engine).get()
        with engine.connect() as conn:
            found = anomalies.detect(conn, current, self._station.clock())
        resp.media = {"enabled": current.anomaly_detection_enabled, "anomalies": found}


class TrafficPrivacy:
    """POST /api/traffic/privacy/purge and /privacy/anonymize (``ip``), POST /purge-all.

    Audited as ``traffic.ip_purged``, ``traffic.ip_anonymized`` and ``traffic.purged_all`` with
    the number of rows; the address itself is not written to the audit ledger.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def _run(self, req: falcon.Request, resp: falcon.Response, action: str) -> None:
        station = self._station
        ip = None if action == "purged_all" else privacy.check_ip(json_object(req).get("ip"))
        with begin_write(station.engine) as conn:
            if action == "ip_purged":
                rows = privacy.purge_ip(conn, ip or "")
            elif action == "ip_anonymized":
                rows = privacy.anonymize_ip(conn, ip or "")
            else:
                rows = privacy.purge_all(conn)
            station.ledger.record_or_refuse(
                conn, Actor.from_request(req), f"traffic.{action}", details={"rows": rows}
            )
        resp.media = {"rows": rows}

    def on_post_purge(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._run(req, resp, "ip_purged")

    def on_post_anonymize(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._run(req, resp, "ip_anonymized")

    def on_post_all(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._run(req, resp, "purged_all")


SCREEN_COOKIE = "as_screen"
_SCREEN = re.compile(r"[1-9][0-9]{1,4}x[1-9][0-9]{1,4}")


class TrafficClientBeacon:
    """GET /api/traffic/client?screen=WIDTHxHEIGHT: the page script's screen resolution.

    Recorded once per browser session (a session cookie says it was sent) on the caller's
    rows of the last 30 minutes that have none yet. Answers 204 whatever happens, except 422
    for a malformed ``screen``.
    """

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        screen = req.get_param("screen") or ""
        if not _SCREEN.fullmatch(screen):
            raise Invalid("screen must be WIDTHxHEIGHT, e.g. 1920x1080", field="screen")
        resp.status = falcon.HTTP_204
        if req.cookies.get(SCREEN_COOKIE):
            return
        station = self._station
        current = settings.settings_cache_for(station.engine).get()
        if not current.enabled:
            return
        ip = req.context.client_ip
        if current.anonymize_ip:
            ip = addresses.mask_address(ip)
        flush_all()  # this process's buffered rows of the page that sent the beacon
        with begin_write(station.engine) as conn:
            privacy.record_screen(
                conn, addresses.visitor_key(ip), screen, station.clock().timestamp()
            )
        resp.set_cookie(
            SCREEN_COOKIE,
            "1",
            path="/",
            secure=req.scheme == "https",
            http_only=True,
            same_site="Lax",
        )


class TrafficDashboardPage:
    """GET /traffic/dashboard: the dashboard page (its data comes from the API by script)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._station.templates.page(req, resp, "traffic_dashboard.html")
