"""GeoIP database resources: list what is installed; upload a Country, City or ASN database.

An upload is streamed to a private staging folder beside the slot files, typed from its metadata
(``database_type``), validated by opening it with the ``geoip2`` reader and looking one address
up, and only then moved over the slot's file (``os.replace``, so a reader never sees half a file
and a bad upload leaves the old database in place). Without the ``geoip2`` package a file with
MaxMind DB metadata is accepted with a note. The slot's path setting (``geoip_database_path`` or
``geoip_asn_database_path``) is then pointed at the installed file through the data directory's
``GeoipPaths`` keeper, in the transaction of the audit row: ``config.updated`` (section
``geoip``, field ``location_database`` or ``asn_database``, plus the setting when it changed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO

import falcon

from alertstation import lazy
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Invalid
from alertstation.http.uploads import (
    UploadTooLarge,
    copy_limited,
    one_file,
    require_multipart,
    staging_folder,
)
from alertstation.security.geoip.lookup import (
    AUDIT_FIELDS,
    NotMaxMindDatabase,
    database_kind,
    database_paths,
    describe,
    geoip_dir,
    installed,
    load_reader,
    paths_keeper,
    read_metadata,
    slot_of,
    slot_path,
)

MAX_UPLOAD_BYTES = 200 * 1024 * 1024
AUDIT_SECTION = "geoip"
READER_MISSING_NOTE = "accepted; install geoip2 for lookups to resolve"
_PROBES = {"City": "city", "Country": "country", "ASN": "asn"}


def validate_database(path: Path) -> tuple[str, bool]:
    """Return the kind of the database at ``path`` and whether the reader checked it.

    With ``geoip2`` the file is opened and one address looked up with the method its type calls
    for; without it the metadata alone decides. NotMaxMindDatabase says why it is refused.
    """
    kind = database_kind(read_metadata(path)["database_type"])
    module = load_reader()
    if module is None:
        return kind, False
    not_found = lazy.load("geoip2.errors").AddressNotFoundError
    try:
        reader = module.Reader(str(path))
    except (OSError, ValueError, RuntimeError, RecursionError) as ex:
        raise NotMaxMindDatabase(f"the reader cannot open the database: {ex}") from None
    try:
        probe = getattr(reader, _PROBES[kind])
        try:
            probe("1.1.1.1" if reader.metadata().ip_version == 4 else "2001:4860::1")
        except not_found:
            pass
    except (ValueError, RuntimeError, TypeError, RecursionError) as ex:
        raise NotMaxMindDatabase(f"the reader cannot use the database: {ex}") from None
    finally:
        reader.close()
    return kind, True


def install_upload(stream: BinaryIO, data_dir: Path) -> tuple[str, str, bool]:
    """Check and install an uploaded database; return its kind, its slot and reader-checked."""
    with staging_folder(geoip_dir(data_dir)) as staging:
        staged = staging / "upload.mmdb"
        try:
            size = copy_limited(stream, staged, MAX_UPLOAD_BYTES)
        except UploadTooLarge as ex:
            raise NotMaxMindDatabase(str(ex)) from None
        if size == 0:
            raise NotMaxMindDatabase("the uploaded file is empty")
        kind, checked = validate_database(staged)
        slot = slot_of(kind)
        os.replace(staged, slot_path(data_dir, slot))
        return kind, slot, checked


def _listing(data_dir: Path) -> dict[str, Any]:
    return {
        "databases": {
            slot: (info.as_dict() if info is not None else None)
            for slot, info in installed(data_dir).items()
        },
        "reader_available": load_reader() is not None,
        "paths": {slot: str(path) for slot, path in database_paths(data_dir).items()},
    }


class GeoipDatabases:
    """GET /api/traffic/geoip: the installed databases, their type, build date and size, and
    where each slot's database is looked for (``paths``)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = _listing(self._station.settings.data_dir)


class GeoipUpload:
    """POST /api/traffic/geoip/upload: one .mmdb in the multipart field ``file``."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        require_multipart(req)
        station = self._station
        data_dir = station.settings.data_dir

        def receive(part: Any) -> tuple[str, str, bool]:
            try:
                return install_upload(part.stream, data_dir)
            except NotMaxMindDatabase as ex:
                raise Invalid(str(ex), code="invalid_geoip_database", field="file") from None

        kind, slot, checked = one_file(req, receive)
        keeper = paths_keeper(data_dir)
        with begin_write(station.engine) as conn:
            pointed = keeper.point(conn, slot, slot_path(data_dir, slot)) if keeper else []
            station.ledger.record_config_update(
                conn, Actor.from_request(req), AUDIT_SECTION, [AUDIT_FIELDS[slot], *pointed]
            )
        if keeper is not None:
            keeper.refresh()
        answer: dict[str, Any] = {
            "type": kind,
            "slot": slot,
            "database": describe(slot_path(data_dir, slot), slot).as_dict(),
            "validated_with_reader": checked,
        }
        if not checked:
            answer["note"] = READER_MISSING_NOTE
        resp.status = falcon.HTTP_201
        resp.media = answer
