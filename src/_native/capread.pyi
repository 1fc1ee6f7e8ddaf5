"""Read a CAP ``<alert>`` document's raw fields straight from its bytes, in one expat pass.

Call it through ``alertstation.alerts.capfast``, which decides when it may; the full path,
``alertstation.alerts.cap.read_fields`` over the hardened lxml tree, is its twin.
"""

from typing import Any

#: Why the reader is unusable in this interpreter ("" when it is usable).
UNUSABLE: str

def read(document: bytes) -> dict[str, Any] | None:
    """Return the raw fields of a CAP ``<alert>`` document, or None to take the full path."""
