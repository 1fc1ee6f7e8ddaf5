"""Receive uploaded files: the multipart field, the capped copy, and write-then-rename.

Every upload route goes through here: zone DBFs, GeoIP databases, alert files and the manual
EAS voice WAV. A file is read in chunks and refused the moment it passes its limit; a file that
replaces one in place is first written to a private ``.upload-*`` folder beside its target and
moved over it with ``os.replace`` only once it has been checked, so a reader never sees half a
file and a refused upload leaves the old one in place. The worker sweeps ``.upload-*`` folders
that a killed process left behind (``alertstation.worker.upload_sweep``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, TypeVar

from alertstation import lazy
from alertstation.errors import BadRequest, UnsupportedMediaType

if TYPE_CHECKING:
    import falcon

# Read when a request arrives; the worker's sweep imports STAGING_PREFIX without Falcon.
falcon_module = lazy.module("falcon")

#: Name prefix of the private staging folders (the worker's sweep looks for it).
STAGING_PREFIX: Final[str] = ".upload-"
#: The multipart field that carries the file.
FILE_FIELD: Final[str] = "file"
CHUNK: Final[int] = 1024 * 1024

T = TypeVar("T")


class UploadTooLarge(ValueError):
    """The uploaded file is longer than its limit; nothing past the limit was read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the file is larger than the {limit // (1024 * 1024)} MiB limit")
        self.limit = limit


def is_multipart(req: falcon.Request) -> bool:
    """Tell whether the request body is a multipart form."""
    return (req.content_type or "").startswith(falcon_module.MEDIA_MULTIPART)


def require_multipart(req: falcon.Request, field: str = FILE_FIELD) -> None:
    """Raise 415 unless the body is a multipart form."""
    if not is_multipart(req):
        raise UnsupportedMediaType(f"Send the file as multipart/form-data in a field '{field}'.")


def one_file(req: falcon.Request, receive: Callable[[Any], T], field: str = FILE_FIELD) -> T:
    """Hand the one part named ``field`` to ``receive`` and return what it returns.

    Other fields are skipped. No such part, or a second one, is a 400.
    """
    received: list[T] = []
    for part in req.get_media():
        if part.name != field:
            continue
        if received:
            raise BadRequest("Send exactly one file.")
        received.append(receive(part))
    if not received:
        raise BadRequest(f"No file was sent in the field '{field}'.")
    return received[0]


def read_limited(stream: BinaryIO, limit: int) -> bytes:
    """Read ``stream`` to its end in chunks; UploadTooLarge once it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while chunk := stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise UploadTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def copy_limited(stream: BinaryIO, target: Path, limit: int) -> int:
    """Copy ``stream`` into the file ``target``; return its size, UploadTooLarge past ``limit``."""
    size = 0
    with target.open("wb") as out:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise UploadTooLarge(limit)
            out.write(chunk)
    return size


@contextmanager
def staging_folder(beside: Path) -> Iterator[Path]:
    """Yield a private ``.upload-*`` folder inside ``beside``; it is removed afterwards.

    Write the upload there, check it, then ``os.replace`` it onto its target (the same file
    system, so the rename is atomic).
    """
    beside.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=beside))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
