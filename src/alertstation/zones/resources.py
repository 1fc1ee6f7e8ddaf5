"""Zone catalog administration resources: info, upload, reload, search, picker, validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.errors import Invalid, ServiceUnavailable
from alertstation.http.uploads import one_file, require_multipart
from alertstation.zones import split_known, validate_zone_codes
from alertstation.zones.admin import (
    MAX_UPLOAD_BYTES,
    catalog_info,
    picker_groups,
    receive_upload,
    search_zones,
    zone_as_dict,
)
from alertstation.zones.loader import ZONE_TYPES
from alertstation.zones.resolver import resolve_dbf_paths
from alertstation.zones.service import SyncReport, apply_files


def _report(report: SyncReport) -> dict[str, Any]:
    return {
        "counts": report.counts,
        "records": report.records,
        "files": {family: path.name for family, path in report.paths.items()},
        "generation": report.generation,
        "summary": report.lines(),
    }


class ZonesPage:
    """GET /admin/zones: info panel, upload, reload, catalog search and the code picker."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        station.zones.index()  # the page reports the in-memory copy, so make it current
        with station.engine.connect() as conn:
            infos = catalog_info(conn, station.settings, station.zones)
        station.templates.page(
            req, resp, "zones.html", families=infos, max_upload_bytes=MAX_UPLOAD_BYTES
        )


class ZonesInfo:
    """GET /admin/zones/info: per family the active file, sizes, counts and cache size."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        station.zones.index()  # make sure the in-memory copy reflects the table
        with station.engine.connect() as conn:
            infos = catalog_info(conn, station.settings, station.zones)
        resp.media = {
            "families": [info.__dict__ for info in infos],
            "cache_size": station.zones.size,
            "generation": station.zones.generation,
        }


class ZonesUpload:
    """POST /admin/zones/upload: one .dbf in a multipart form; checked, saved, then synced."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        require_multipart(req)
        station = self._station

        def receive(part: Any) -> tuple[str, Path]:
            try:
                return receive_upload(part.stream, station.settings.assets_dir, part.filename)
            except ValueError as ex:
                raise Invalid(str(ex), code="invalid_dbf") from ex

        family, path = one_file(req, receive)
        try:
            report = apply_files(
                station.engine,
                {family: path},
                settings=station.settings,
                actor=Actor.from_request(req),
            )
        except ValueError as ex:
            raise Invalid(str(ex), code="invalid_dbf") from ex
        station.zones.clear()
        resp.status = falcon.HTTP_201
        resp.media = {"saved": path.name, "family": family, **_report(report)}


class ZonesReload:
    """POST /admin/zones/reload: re-sync every family from the files the resolver picks."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        settings = station.settings
        paths = resolve_dbf_paths(settings.assets_dir, env_path=settings.wx_zone_dbf_path)
        if not paths:
            raise ServiceUnavailable(
                f"No zone DBF files in {settings.assets_dir}; upload one or run "
                "`alertstation zones download`.",
                code="no_zone_files",
            )
        try:
            report = apply_files(
                station.engine, paths, settings=settings, actor=Actor.from_request(req)
            )
        except ValueError as ex:
            raise Invalid(str(ex), code="invalid_dbf") from ex
        station.zones.clear()
        resp.media = _report(report)


class ZonesSearch:
    """GET /api/zones: search the catalog by code prefix or name."""

    def __init__(self, station: Station) -> None:
        self._zones = station.zones

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        zone_type = req.get_param("type")
        if zone_type is not None and zone_type not in ZONE_TYPES:
            raise Invalid(f"type must be one of {', '.join(ZONE_TYPES)}", field="type")
        limit = req.get_param_as_int("limit", min_value=1, max_value=500) or 50
        offset = req.get_param_as_int("offset", min_value=0) or 0
        total, page = search_zones(
            self._zones,
            query=req.get_param("q") or "",
            zone_type=zone_type,
            state=req.get_param("state"),
            limit=limit,
            offset=offset,
        )
        resp.media = {"total": total, "zones": [zone_as_dict(record) for record in page]}


class ZonesPicker:
    """GET /api/zones/picker?family=county|land|fire|marine: codes grouped for the picker."""

    def __init__(self, station: Station) -> None:
        self._zones = station.zones

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        try:
            groups = picker_groups(self._zones, req.get_param("family") or "land")
        except ValueError as ex:
            raise Invalid(str(ex), field="family") from ex
        resp.media = {"groups": groups}


class ZonesValidate:
    """GET /api/zones/validate?codes=...: normalise codes, split valid/invalid, known/unknown."""

    def __init__(self, station: Station) -> None:
        self._zones = station.zones

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        text = req.get_param("codes") or ""
        if len(text) > 20_000:
            raise Invalid("too many codes at once (20,000 characters at most)", field="codes")
        valid, invalid = validate_zone_codes(text)
        known, unknown = split_known(self._zones, valid)
        resp.media = {
            "valid": valid,
            "invalid": invalid,
            "known": [{"code": code, "name": self._zones.name_for(code)} for code in known],
            "unknown": unknown,
        }
