"""The station's JSON encoding (orjson): answers, the broadcast state, stored documents.

Kept apart from :mod:`alertstation.http.media` (Falcon's media handlers) so a process that
writes JSON but serves no request, the worker, does not load Falcon.
"""

from __future__ import annotations

from typing import Any

import orjson

JSON_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_SERIALIZE_NUMPY


def dumps(obj: Any) -> bytes:
    """Serialise ``obj`` to JSON bytes (datetimes as UTC ISO 8601 with a Z)."""
    return orjson.dumps(obj, option=JSON_OPTIONS)


def loads(data: bytes | str) -> Any:
    """Parse JSON bytes."""
    return orjson.loads(data)
