"""Read a plain CAP message's fields in one compiled pass, when it is safe to skip the tree.

Most messages a station ingests are single, unsigned CAP ``<alert>`` documents in UTF-8. For
those, ``fast_fields`` reads the raw fields of ``cap.read_fields`` straight from the bytes with
the compiled reader ``alertstation._native.capread``: one expat pass instead of the expat screen,
the lxml parse and the tree walk. It answers ``None`` for anything else, and the caller then
takes the full path (screen, hardened lxml parse, signature check), which also names every
problem. So a message reads to the same ``Alert`` or the same error either way
(``tests/alerts/test_cap_compiled_read.py`` holds the two to that).

The expat pass refuses a document type declaration as the screen does: without one there are no
entity declarations, nothing external and no entity expansion to bound.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from alertstation.alerts.parsing import MAX_MESSAGE_BYTES
from alertstation.kernel_loader import load_kernel

_native: ModuleType | None = load_kernel("capread")
if _native is not None and _native.UNUSABLE:
    _native = None


#: An XML declaration at the start, and one that names version 1.0 (expat takes any version
#: number; libxml2, which the full path parses with, refuses all but 1.x and warns on 1.1).
_DECLARATION = re.compile(rb"(?:\xef\xbb\xbf)?<\?xml[ \t\r\n]")
_VERSION_1_0 = re.compile(
    rb"(?:\xef\xbb\xbf)?<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(['\"])1\.0\1"
)


def available() -> bool:
    """Tell whether the compiled reader is built and usable in this interpreter."""
    return _native is not None


def fast_fields(raw: bytes) -> tuple[dict[str, Any], str] | None:
    """Return a CAP message's raw fields and its text, or None to take the full path.

    Only UTF-8 (or ASCII) messages up to ``MAX_MESSAGE_BYTES`` with no NUL byte (so no UTF-16 or
    UTF-32), no ``<!DOCTYPE`` and no XML declaration other than version 1.0 are tried; the
    reader itself declines the rest (see ``alertstation._native.capread``).
    """
    if _native is None or len(raw) > MAX_MESSAGE_BYTES or b"\0" in raw or b"<!DOCTYPE" in raw:
        return None
    if _DECLARATION.match(raw) and not _VERSION_1_0.match(raw):
        return None
    fields = _native.read(raw)  # first: most bodies it declines are declined within 64 KiB
    if fields is None:
        return None
    try:
        return fields, raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
