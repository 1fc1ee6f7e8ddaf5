"""JSON media handlers backed by orjson; multipart forms whose part headers must be text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import falcon
import falcon.media

from alertstation.http.jsonbytes import JSON_OPTIONS, dumps, loads

__all__ = ["JSON_OPTIONS", "dumps", "install_media_handlers", "loads"]


class CheckedMultipartForm:
    """Iterate a multipart form, refusing a part whose headers are not text with a 400.

    Falcon decodes a part's Content-Disposition as UTF-8 and its Content-Type as ASCII only
    when ``name``, ``filename`` or ``content_type`` is first read, and lets the
    UnicodeDecodeError escape (a 500). Reading them here turns that into a MultipartParseError.
    """

    def __init__(self, form: Any) -> None:
        self._form = form

    def __iter__(self) -> Iterator[Any]:
        for part in self._form:
            try:
                _ = (part.name, part.filename, part.content_type)
            except UnicodeDecodeError:
                raise falcon.MultipartParseError(
                    description="a part's Content-Disposition or Content-Type header is not text"
                ) from None
            yield part


class CheckedMultipartHandler(falcon.media.MultipartFormHandler):  # type: ignore[misc]
    """Falcon's multipart handler, with forms that refuse undecodable part headers."""

    def deserialize(self, stream: Any, content_type: str | None, content_length: int | None) -> Any:
        """Return the form, checked part by part as it is iterated."""
        return CheckedMultipartForm(super().deserialize(stream, content_type, content_length))


def install_media_handlers(app: falcon.App) -> None:
    """Use orjson for request and response JSON; check multipart part headers."""
    handler = falcon.media.JSONHandler(dumps=dumps, loads=loads)
    app.req_options.media_handlers.update({falcon.MEDIA_JSON: handler})
    app.resp_options.media_handlers.update({falcon.MEDIA_JSON: handler})
    app.req_options.media_handlers[falcon.MEDIA_MULTIPART] = CheckedMultipartHandler()
