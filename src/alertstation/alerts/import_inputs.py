"""The inputs of ``alerts import``: files, folders and archives, one message body at a time.

An operator's archive of past alerts is rarely a handful of files: it is a folder of tens of
thousands of CAP documents (too many for a shell's argument list), or the same folder zipped or
tarred. ``collect`` lists every input before anything is read, so the progress bar knows how much
is left; each input is read only when its turn comes, so memory stays flat whatever the size.

- A file named on the command line is always read, whatever its name.
- A folder is walked (sorted, hidden entries and symbolic links skipped), and so is an archive
  (``.zip``, ``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2``, ``.tar.xz``): only members named like
  a message (``MESSAGE_SUFFIXES``) are read; the others are counted as ignored.
- Nothing is extracted to disk. A member or file larger than the feed limit is refused unread,
  as a problem of its own, and the import goes on.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from alertstation.alerts.parsing import MAX_FEED_BYTES

#: Names read inside folders and archives: CAP XML, ATOM and JSON feeds.
MESSAGE_SUFFIXES = (".xml", ".cap", ".atom", ".json", ".geojson")
_ZIP_SUFFIXES = (".zip",)
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class InputError(ValueError):
    """An input that cannot be read at all (missing, unreadable, a broken archive)."""


class TooLarge(ValueError):
    """One file or archive member over the size limit: refused unread."""


@dataclass(frozen=True)
class Input:
    """One message body to import: where it came from, and how to read it."""

    source: str
    read: Callable[[], bytes]


@dataclass
class Inputs:
    """Every body to import, in order, and how many entries were passed over."""

    items: list[Input] = field(default_factory=list)
    ignored: int = 0


def is_archive(path: Path) -> bool:
    """Tell whether ``path`` is named like an archive this command opens."""
    name = path.name.lower()
    return name.endswith(_ZIP_SUFFIXES) or name.endswith(_TAR_SUFFIXES)


def is_message_name(name: str) -> bool:
    """Tell whether a folder entry or archive member is named like a message."""
    base = PurePosixPath(name).name
    return not base.startswith(".") and base.lower().endswith(MESSAGE_SUFFIXES)


def collect(paths: Sequence[Path], stack: ExitStack, *, limit: int = MAX_FEED_BYTES) -> Inputs:
    """List every body under ``paths``; archives opened here stay open until ``stack`` closes.

    InputError names the first path that cannot be opened (nothing has been read then).
    """
    found = Inputs()
    for path in paths:
        if path.is_dir():
            _walk(path, found, limit)
        elif is_archive(path) and path.is_file():
            _open_archive(path, found, stack, limit)
        elif path.is_file():
            found.items.append(Input(str(path), _file_reader(path, limit)))
        else:
            raise InputError(f"cannot read {path}: no such file or folder")
    return found


def _walk(folder: Path, found: Inputs, limit: int) -> None:
    """Add a folder's message files, sorted by path; hidden entries and links are passed over."""
    names: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False, onerror=_raise_walk_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            path = Path(root, name)
            if is_message_name(name) and not path.is_symlink():
                names.append(path)
            else:
                found.ignored += 1
    found.items.extend(Input(str(path), _file_reader(path, limit)) for path in sorted(names))


def _raise_walk_error(error: OSError) -> None:
    raise InputError(f"cannot read {error.filename}: {error.strerror or error}")


def _file_reader(path: Path, limit: int) -> Callable[[], bytes]:
    def read() -> bytes:
        try:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)
        except OSError as ex:
            raise InputError(f"cannot read {path}: {ex.strerror or ex}") from ex
        return _within(data, limit)

    return read


def _within(data: bytes, limit: int, declared: int = 0) -> bytes:
    """Return ``data``; TooLarge when it (or the size its archive declares) is over ``limit``."""
    if len(data) > limit or declared > limit:
        raise TooLarge(f"over the limit of {limit} bytes; refused unread")
    return data


def _open_archive(path: Path, found: Inputs, stack: ExitStack, limit: int) -> None:
    try:
        if path.name.lower().endswith(_ZIP_SUFFIXES):
            archive = stack.enter_context(zipfile.ZipFile(path))
            _add_zip_members(path, archive, found, limit)
        else:
            tar = stack.enter_context(tarfile.open(path, mode="r:*"))
            _add_tar_members(path, tar, found, limit)
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as ex:
        raise InputError(f"cannot read {path}: {ex}") from ex


def _add_zip_members(path: Path, archive: zipfile.ZipFile, found: Inputs, limit: int) -> None:
    members = [info for info in archive.infolist() if not info.is_dir()]
    wanted = sorted((m for m in members if is_message_name(m.filename)), key=_zip_name)
    found.ignored += len(members) - len(wanted)

    def reader(info: zipfile.ZipInfo) -> Callable[[], bytes]:
        def read() -> bytes:
            _within(b"", limit, info.file_size)
            try:
                with archive.open(info) as member:
                    data = member.read(limit + 1)  # the declared size is not trusted
            except (OSError, zipfile.BadZipFile, RuntimeError, EOFError) as ex:
                raise InputError(f"cannot read {path}:{info.filename}: {ex}") from ex
            return _within(data, limit)

        return read

    found.items.extend(Input(f"{path}:{info.filename}", reader(info)) for info in wanted)


def _zip_name(info: zipfile.ZipInfo) -> str:
    return info.filename


def _add_tar_members(path: Path, tar: tarfile.TarFile, found: Inputs, limit: int) -> None:
    members = [m for m in tar.getmembers() if not m.isdir()]
    # Links and devices are never read: only regular members named like a message.
    wanted = [m for m in members if m.isreg() and is_message_name(m.name)]
    found.ignored += len(members) - len(wanted)

    def reader(member: tarfile.TarInfo) -> Callable[[], bytes]:
        def read() -> bytes:
            _within(b"", limit, member.size)
            try:
                handle = tar.extractfile(member)
                data = handle.read(limit + 1) if handle is not None else b""
            except (OSError, tarfile.TarError, EOFError) as ex:
                raise InputError(f"cannot read {path}:{member.name}: {ex}") from ex
            return _within(data, limit)

        return read

    # Archive order: a compressed tar is read front to back, never rewound.
    found.items.extend(Input(f"{path}:{member.name}", reader(member)) for member in wanted)
