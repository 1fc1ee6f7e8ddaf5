"""HTTP resources of backup, database optimisation and the upgrade page."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Final

import falcon

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.errors import Forbidden, ServiceUnavailable
from alertstation.http.bodies import check_bool, form_or_json
from alertstation.http.errors import wants_html
from alertstation.operations.backup import HASH_WARNING, REDACTED_NOTE, BackupError, write_backup
from alertstation.operations.pages import NoStorePage
from alertstation.operations.public.guides import GuideLibrary
from alertstation.operations.upkeep import database_size, optimize_database, upgrade_info
from alertstation.worker.upload_sweep import DOWNLOAD_PREFIX

log = logging.getLogger(__name__)

ADMIN: Final[str] = "admin"
BACKUP_DOWNLOADED: Final[str] = "backup.downloaded"


def _is_admin(req: falcon.Request) -> bool:
    return str(getattr(getattr(req.context, "user", None), "role", "")) == ADMIN


def _include_keys(value: object) -> bool:
    if isinstance(value, str):  # a form checkbox
        return value.lower() in ("on", "true", "1", "yes")
    return check_bool(value, "include_keys") if value is not None else False


class BackupPage(NoStorePage):
    """GET /admin/operations/backup (the page) and POST (the archive as a download)."""

    template = "operations_backup.html"

    def context(self, req: falcon.Request) -> dict[str, Any]:
        return {
            "warning": HASH_WARNING if _is_admin(req) else REDACTED_NOTE,
            "is_admin": _is_admin(req),
            "backend": self._station.engine.dialect.name,
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body, _ = form_or_json(req)
        include_keys = _include_keys(body.get("include_keys"))
        if include_keys and not _is_admin(req):
            raise Forbidden("only an admin may put the keys in a backup", code="admin_only")
        # An operator's backup leaves out password hashes, session tokens and stored secrets.
        include_secrets = _is_admin(req)
        station = self._station
        now = station.clock()
        name = f"alertstation-backup-{now:%Y%m%dT%H%M%SZ}.tar.gz"
        data_dir = station.settings.data_dir
        with tempfile.TemporaryDirectory(prefix=DOWNLOAD_PREFIX, dir=data_dir) as folder:
            path = Path(folder) / name
            try:
                report = write_backup(
                    station.settings,
                    station.engine,
                    path,
                    include_keys=include_keys,
                    include_secrets=include_secrets,
                    now=now,
                )
            except BackupError as ex:
                raise ServiceUnavailable(str(ex), code="backup_failed") from ex
            stream = path.open("rb")  # still readable once the folder is gone (POSIX)
        actor = Actor.from_request(req)
        with begin_write(station.engine) as conn:
            # Who took a copy of the password hashes (and maybe the keys) off the box.
            station.ledger.record(
                conn,
                actor,
                BACKUP_DOWNLOADED,
                target="operations.backup",
                details={"include_keys": include_keys, "include_secrets": include_secrets},
            )
        log.info(
            "backup downloaded",
            extra={"user": actor.username, "keys": include_keys, "secrets": include_secrets},
        )
        resp.content_type = "application/gzip"
        resp.set_header("Content-Disposition", f'attachment; filename="{name}"')
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("X-Backup-Rows", str(sum(report.row_counts.values())))
        resp.set_stream(stream, os.fstat(stream.fileno()).st_size)


class OptimizeDatabase:
    """GET /admin/optimize_db (size now) and POST (ANALYZE, VACUUM, REINDEX; sizes reported)."""

    def __init__(self, station: Station) -> None:
        self._station = station

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        size = database_size(self._station.engine)
        backend = self._station.engine.dialect.name
        if wants_html(req):
            self._station.templates.page(
                req, resp, "optimize_db.html", size=size, backend=backend, report=None
            )
            return
        resp.media = {"backend": backend, "size": size}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        station = self._station
        report = optimize_database(station.engine)
        log.info(
            "database optimized",
            extra={"user": Actor.from_request(req).username, **report.as_dict()},
        )
        if wants_html(req):
            station.templates.page(
                req,
                resp,
                "optimize_db.html",
                size=report.size_after,
                backend=report.backend,
                report=report.as_dict(),
            )
            return
        resp.media = report.as_dict()


def _one_level_down(markdown: str) -> str:
    """Return Markdown with every heading one level deeper (the page's own h2 sits above)."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.split("\n"))


class UpgradePage:
    """GET /admin/operations/upgrade: version, schema, migrations, release notes and the steps."""

    def __init__(self, station: Station) -> None:
        self._station = station
        self._library = GuideLibrary()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        info = upgrade_info(self._station.engine)
        if wants_html(req):
            notes = info["release_notes"]
            self._station.templates.page(
                req,
                resp,
                "operations_upgrade.html",
                info=info,
                notes_html=self._library.render(_one_level_down(notes)) if notes else "",
            )
            return
        resp.media = info
