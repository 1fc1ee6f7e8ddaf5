"""JSON media handlers backed by orjson."""

from __future__ import annotations

from typing import Any

import falcon
import falcon.media
import orjson

JSON_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_SERIALIZE_NUMPY


def dumps(obj: Any) -> bytes:
    """Serialise ``obj`` to JSON bytes (datetimes as UTC ISO 8601 with a Z)."""
    return orjson.dumps(obj, option=JSON_OPTIONS)


def loads(data: bytes | str) -> Any:
    """Parse JSON bytes."""
    return orjson.loads(data)


def install_media_handlers(app: falcon.App) -> None:
    """Use orjson for request and response JSON."""
    handler = falcon.media.JSONHandler(dumps=dumps, loads=loads)
    app.req_options.media_handlers.update({falcon.MEDIA_JSON: handler})
    app.resp_options.media_handlers.update({falcon.MEDIA_JSON: handler})
