"""The archive format: its members, their limits, the MAC, writing and unpacking.

An archive is a gzipped tar (mode 0600). ``manifest.json`` lists every other member with its
size and SHA-256, and ``manifest.mac`` holds an HMAC-SHA256 of the manifest's bytes keyed with
the station's backup key (``<data dir>/backup_key``, kept with the other keys), so the MAC
covers every member. Unpacking accepts only the known member names, regular files, each within
its size limit, and checks every member against the manifest.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any, Final

from alertstation.audit.service import CHECKPOINT_FILE
from alertstation.settings import (
    LEDGER_KEY_FILE,
    SECRET_KEY_FILE,
    Settings,
    load_or_create_key,
)

FORMAT: Final[int] = 2
LEGACY_FORMAT: Final[int] = 1  # before the MAC and the member listing: restored only if trusted
MANIFEST: Final[str] = "manifest.json"
MAC_MEMBER: Final[str] = "manifest.mac"
SQLITE_COPY: Final[str] = "database.sqlite3"
PG_DUMP: Final[str] = "database.pgdump"
REDACTED_ROWS: Final[str] = "redacted-rows.json"
KEYS_DIR: Final[str] = "keys"
BACKUP_KEY_FILE: Final[str] = "backup_key"
KEY_FILES: Final[tuple[str, ...]] = (SECRET_KEY_FILE, LEDGER_KEY_FILE, BACKUP_KEY_FILE)
KEY_MEMBERS: Final[dict[str, str]] = {f"{KEYS_DIR}/{name}": name for name in KEY_FILES}
MiB: Final[int] = 1 << 20
# The largest size each member may have; the database copy is bounded by the disk only.
LIMITS: Final[dict[str, int | None]] = {
    MANIFEST: 1 * MiB,
    MAC_MEMBER: 1024,
    CHECKPOINT_FILE: 64 * MiB,
    REDACTED_ROWS: 256 * MiB,
    SQLITE_COPY: None,
    PG_DUMP: None,
    **{member: 1024 for member in KEY_MEMBERS},
}
STATION_ID_LABEL: Final[bytes] = b"alertstation station id v1"


class BackupError(RuntimeError):
    """A backup or restore could not be made; the message says why (one line)."""


def backup_key(settings: Settings) -> bytes:
    """Return the station's backup key, creating it on first use."""
    return load_or_create_key(settings.data_dir, BACKUP_KEY_FILE).encode()


def station_id(ledger_key: str) -> str:
    """Return a public name of the audit ledger key: which station signed the rows."""
    return hmac.new(ledger_key.encode(), STATION_ID_LABEL, hashlib.sha256).hexdigest()[:32]


def mac_of(key: bytes, manifest: bytes) -> str:
    """Return the archive MAC: HMAC-SHA256 of the manifest's bytes."""
    return hmac.new(key, manifest, hashlib.sha256).hexdigest()


def file_digest(path: Path) -> dict[str, Any]:
    """Return the size and SHA-256 of a file, as the manifest lists them."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": digest.hexdigest()}


def write_archive(
    out: Path, manifest: dict[str, Any], members: dict[str, Path], key: bytes
) -> None:
    """Write ``members`` (name -> staged file), the manifest and its MAC to ``out`` (0600).

    The archive is written to ``.<name>.partial`` beside ``out`` and renamed into place.
    """
    manifest = {**manifest, "members": {name: file_digest(p) for name, p in members.items()}}
    manifest_bytes = json.dumps(manifest, indent=2, sort_keys=True).encode()
    partial = out.with_name(f".{out.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            _add_bytes(tar, MANIFEST, manifest_bytes)
            for name, path in members.items():
                info = tarfile.TarInfo(name)
                info.size = path.stat().st_size
                info.mode = 0o600
                with path.open("rb") as data:
                    tar.addfile(info, data)
            _add_bytes(tar, MAC_MEMBER, mac_of(key, manifest_bytes).encode())
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    archive.addfile(info, io.BytesIO(data))


def _extract(path: Path, folder: Path) -> set[str]:
    """Extract the archive's members into ``folder``; return their names."""
    seen: set[str] = set()
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            name = member.name
            if name not in LIMITS or not member.isfile():
                raise BackupError(f"{path} holds an unexpected member {name!r}")
            if name in seen:
                raise BackupError(f"{path} holds the member {name!r} twice")
            seen.add(name)
            limit = LIMITS[name]
            if limit is not None and member.size > limit:
                raise BackupError(f"{path}: the member {name!r} is larger than {limit} bytes")
            source = tar.extractfile(member)
            if source is None:
                raise BackupError(f"{path}: the member {name!r} cannot be read")
            target = folder / name
            target.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with source, os.fdopen(fd, "wb") as out:
                while chunk := source.read(1 << 20):
                    out.write(chunk)
    return seen


def unpack(path: Path, folder: Path) -> tuple[dict[str, Any], bytes, str]:
    """Unpack ``path`` into ``folder``; return (manifest, its bytes, the MAC it carries).

    Refuses unknown or repeated members, anything but a regular file, a member over its size
    limit, and members that differ from the manifest's listing.
    """
    try:
        seen = _extract(path, folder)
    except (tarfile.TarError, OSError, EOFError, ValueError) as ex:
        raise BackupError(f"{path} is not a readable backup archive: {ex}") from ex
    if MANIFEST not in seen:
        raise BackupError(f"{path} has no manifest")
    manifest_bytes = (folder / MANIFEST).read_bytes()
    try:
        manifest = json.loads(manifest_bytes)
    except ValueError as ex:
        raise BackupError(f"{path} has no readable manifest") from ex
    if not isinstance(manifest, dict) or manifest.get("format") not in (FORMAT, LEGACY_FORMAT):
        raise BackupError(f"{path} is not a backup of this format (format {FORMAT})")
    if manifest["format"] == LEGACY_FORMAT:
        return manifest, manifest_bytes, ""  # no MAC to check: refused unless trusted
    mac = (folder / MAC_MEMBER).read_text("ascii", "replace").strip() if MAC_MEMBER in seen else ""
    listed = manifest.get("members")
    if not isinstance(listed, dict):
        raise BackupError(f"{path}: the manifest lists no members")
    present = seen - {MANIFEST, MAC_MEMBER}
    if set(listed) != present:
        missing = sorted(set(listed) - present) or sorted(present - set(listed))
        raise BackupError(f"{path}: the members differ from the manifest ({', '.join(missing)})")
    for name in sorted(present):
        if file_digest(folder / name) != listed[name]:
            raise BackupError(f"{path}: the member {name!r} differs from the manifest")
    return manifest, manifest_bytes, mac
