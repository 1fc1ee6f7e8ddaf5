"""Remove upload staging folders left behind by a process killed mid-upload.

A zone DBF or GeoIP upload is written to a private ``.upload-*`` folder beside its target
(``assets/`` and ``<data dir>/geoip/``) and removed when the upload is done. A web worker
killed in between leaves the folder behind. ``run``, ``serve`` and ``worker`` sweep them at
start, and the leader sweeps them every ``INTERVAL`` seconds. Only entries untouched for
``MAX_AGE`` seconds go, so an upload in progress in another process is never removed.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from alertstation.http.uploads import STAGING_PREFIX
from alertstation.security.geoip.lookup import geoip_dir

if TYPE_CHECKING:
    from alertstation.context import Station
    from alertstation.settings import Settings

log = logging.getLogger("alertstation.worker")

PREFIX: Final[str] = STAGING_PREFIX
MAX_AGE: Final[float] = 3600.0
INTERVAL: Final[float] = 3600.0


def upload_folders(settings: Settings) -> list[Path]:
    """Return the folders that receive uploads."""
    return [settings.assets_dir, geoip_dir(settings.data_dir)]


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
    """Remove ``.upload-*`` entries of ``folders`` untouched for ``max_age`` seconds.

    ``now`` is a POSIX timestamp (the caller's clock). Returns what was removed.
    """
    removed: list[Path] = []
    for folder in folders:
        try:
            entries = [entry for entry in folder.iterdir() if entry.name.startswith(PREFIX)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            try:
                if now - _last_touched(entry) < max_age:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            except FileNotFoundError:
                continue  # another process swept it first
            except OSError as ex:
                log.warning("cannot remove a stale upload %s: %s", entry, ex)
                continue
            removed.append(entry)
    if removed:
        log.info(
            "removed %d stale upload(s) left by an interrupted upload",
            len(removed),
            extra={"paths": [str(path) for path in removed]},
        )
    return removed


def sweep_job(station: Station) -> None:
    """The leader's periodic sweep, on the station's clock."""
    sweep_stale_uploads(upload_folders(station.settings), station.clock().timestamp())
