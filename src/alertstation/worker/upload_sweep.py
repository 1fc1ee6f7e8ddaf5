"""Remove staging folders and partial files left behind by a process killed mid-work.

A zone DBF or GeoIP upload is written to a private ``.upload-*`` folder beside its target
(``assets/`` and ``<data dir>/geoip/``); a backup works in ``<data dir>/.backup-*``, a backup
download in ``<data dir>/.download-*``, a restore in ``<data dir>/.restore-*`` (and, on SQLite,
a ``.restore-*.sqlite3`` beside the database); archives and the restore plan are written as
``.<name>.partial`` and renamed. Each is removed when its work is done; a process killed in
between leaves it behind. ``run``, ``serve`` and ``worker`` sweep them at start, and the leader
sweeps them every ``INTERVAL`` seconds. Only entries untouched for ``MAX_AGE`` seconds go, so
work in progress in another process is never removed, and the staging folder of a restore
that is still pending (``alertstation.db.restore_plan``) is kept for it.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from alertstation.db.restore_plan import read_plan
from alertstation.http.uploads import STAGING_PREFIX
from alertstation.security.geoip.lookup import geoip_dir

if TYPE_CHECKING:
    from alertstation.context import Station
    from alertstation.settings import Settings

log = logging.getLogger("alertstation.worker")

PREFIX: Final[str] = STAGING_PREFIX
BACKUP_PREFIX: Final[str] = ".backup-"
DOWNLOAD_PREFIX: Final[str] = ".download-"
RESTORE_PREFIX: Final[str] = ".restore-"
PREFIXES: Final[tuple[str, ...]] = (PREFIX, BACKUP_PREFIX, DOWNLOAD_PREFIX, RESTORE_PREFIX)
PARTIAL_SUFFIX: Final[str] = ".partial"
MAX_AGE: Final[float] = 3600.0
INTERVAL: Final[float] = 3600.0


def upload_folders(settings: Settings) -> list[Path]:
    """Return the folders that receive uploads."""
    return [settings.assets_dir, geoip_dir(settings.data_dir)]


def leftover_folders(settings: Settings) -> list[Path]:
    """Return every folder where killed work may leave staging: uploads, backups, restores."""
    folders = [*upload_folders(settings), settings.data_dir]
    if settings.is_sqlite:
        database = Path(settings.database_url.split("///", 1)[-1]).parent
        if database not in folders:
            folders.append(database)
    return folders


def _is_leftover(name: str) -> bool:
    if name.startswith(PREFIXES):
        return True
    return name.startswith(".") and name.endswith(PARTIAL_SUFFIX)


def _pending(folders: Iterable[Path]) -> set[Path]:
    """Return the staging of a restore still pending in any of ``folders`` (kept for it)."""
    kept: set[Path] = set()
    for folder in folders:
        try:
            plan = read_plan(folder)
        except (OSError, ValueError):
            continue
        if plan is not None:
            kept.add(folder / str(plan.get("staging")))
            kept.update(Path(p) for p in plan.get("leftovers", []))
    return kept


def _last_touched(path: Path) -> float:
    """Return the newest modification time of ``path`` and, for a folder, of what it holds."""
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                try:
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
                except FileNotFoundError:
                    continue
    return newest


def sweep_stale_uploads(
    folders: Iterable[Path], now: float, max_age: float = MAX_AGE
) -> list[Path]:
    """Remove staging entries of ``folders`` untouched for ``max_age`` seconds.

    ``now`` is a POSIX timestamp (the caller's clock). Returns what was removed.
    """
    folders = list(folders)
    pending = _pending(folders)
    removed: list[Path] = []
    for folder in folders:
        try:
            entries = [entry for entry in folder.iterdir() if _is_leftover(entry.name)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            try:
                if entry in pending or now - _last_touched(entry) < max_age:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            except FileNotFoundError:
                continue  # another process swept it first
            except OSError as ex:
                log.warning("cannot remove stale staging %s: %s", entry, ex)
                continue
            removed.append(entry)
    if removed:
        log.info(
            "removed %d stale staging folder(s) or file(s) left by interrupted work",
            len(removed),
            extra={"paths": [str(path) for path in removed]},
        )
    return removed


def sweep_job(station: Station) -> None:
    """The leader's periodic sweep, on the station's clock."""
    sweep_stale_uploads(leftover_folders(station.settings), station.clock().timestamp())
