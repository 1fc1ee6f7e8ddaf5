"""Keep a kept-alive connection usable after an answer that left the request body unread.

An early answer (413, 401, 422 before the body is read ...) leaves the body's bytes on the socket.
A small remainder is read and dropped here so the connection can serve the next request; a larger
or unknown one (chunked) makes the server close the connection and say so (``Connection: close``)
instead of announcing keep-alive and then closing.

Chunked request bodies carry no Content-Length. :func:`buffer_chunked_body` reads one up to the
route's limit into a spooled file and gives it a Content-Length, so every reader sees an ordinary
body; over the limit is 413. A server that cannot tell where such a body ends gets 411, and a
body whose chunked framing is malformed (a bad chunk size, a missing terminator, a body cut
short) gets 400, and the connection is closed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from typing import Any

import falcon
from gunicorn.http.errors import ParseException

from alertstation.errors import BadRequest, LengthRequired, PayloadTooLarge

# The environ key that asks the server to close the connection after this answer.
CLOSE_CONNECTION = "alertstation.close_connection"
# Unread bodies up to this size are read and dropped so the connection stays usable.
DRAIN_LIMIT = 64 * 1024
_SPOOL_IN_MEMORY = 1024 * 1024
_READ_SIZE = 64 * 1024
# What reading a chunked body raises when its framing is malformed: gunicorn's parse errors
# (InvalidChunkSize, ChunkMissingTerminator, InvalidHeader in the trailers), NoMoreData (an
# OSError) for a body cut short, ValueError from other servers.
_MALFORMED_BODY = (ParseException, OSError, ValueError)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def is_chunked(req: falcon.Request) -> bool:
    """Tell whether the body comes in chunked transfer coding (and so has no Content-Length)."""
    env = req.env
    coding = env.get("HTTP_TRANSFER_ENCODING")  # what req.get_header("Transfer-Encoding") reads
    return bool(coding) and "chunked" in coding.lower() and not env.get("CONTENT_LENGTH")


def buffer_chunked_body(req: falcon.Request, limit: int) -> None:
    """Read a chunked body of at most ``limit`` bytes and present it with a Content-Length.

    Raises PayloadTooLarge past the limit, LengthRequired when the server does not mark where
    the body ends (``wsgi.input_terminated``), since reading on could block forever.
    """
    if not is_chunked(req):
        return
    if not req.env.get("wsgi.input_terminated"):
        raise LengthRequired("Send the body with a Content-Length header.")
    source = req.env["wsgi.input"]
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)  # noqa: SIM115 (lives on)
    size = 0
    while True:
        try:
            block = source.read(min(_READ_SIZE, limit + 1 - size))
        except _MALFORMED_BODY:
            spool.close()
            req.env[CLOSE_CONNECTION] = True  # where the next request starts is unknown
            raise BadRequest(
                "The chunked request body is malformed.", code="malformed_body"
            ) from None
        if not block:
            break
        size += len(block)
        if size > limit:
            spool.close()
            raise PayloadTooLarge(f"Request body is over the {limit}-byte limit.")
        spool.write(block)
    spool.seek(0)
    req.env["wsgi.input"] = req.stream = spool
    req.env["CONTENT_LENGTH"] = str(size)
    req.context.body_buffered = spool


def finish_unread_body(req: falcon.Request) -> None:
    """Drop a small unread body; ask the server to close the connection for a larger one.

    A chunked body buffered by :func:`buffer_chunked_body` was read whole; its spool is closed.
    """
    spool = getattr(req.context, "body_buffered", None)
    if spool is not None:
        spool.close()
        return
    env = req.env
    if not env.get("CONTENT_LENGTH") and "HTTP_TRANSFER_ENCODING" not in env:
        return  # no body was announced (most requests): nothing to drop
    if is_chunked(req):
        req.env[CLOSE_CONNECTION] = True
        return
    try:
        length = req.content_length or 0
    except falcon.HTTPInvalidHeader:
        req.env[CLOSE_CONNECTION] = True
        return
    if length <= 0 or req.bounded_stream.eof:
        return
    if length > DRAIN_LIMIT or not req.env.get("wsgi.input_terminated"):
        # Past the limit, or on a server whose input is not bounded to the body (wsgiref): a
        # body read around falcon's own stream (multipart) leaves its count behind, and reading
        # on could wait forever for bytes that never come. Closing is always safe.
        req.env[CLOSE_CONNECTION] = True
        return
    try:
        req.bounded_stream.exhaust()
    except OSError:
        req.env[CLOSE_CONNECTION] = True


class ConnectionControl:
    """WSGI wrapper: make the server close the connection when the app asked for it.

    gunicorn drops a ``Connection`` header set by an application (hop-by-hop headers belong to
    the server), so the wrapper calls ``force_close()`` on gunicorn's response object, which
    ``start_response`` is bound to; gunicorn then sends ``Connection: close`` and closes.
    """

    def __init__(self, app: WsgiApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        # The app has asked (or not) by the time it returns: the flag is set while the answer is
        # finished, before start_response, and gunicorn sends the headers on the first write.
        body = self.app(environ, start_response)
        if environ.get(CLOSE_CONNECTION):
            server_response = getattr(start_response, "__self__", None)
            force_close = getattr(server_response, "force_close", None)
            if callable(force_close):
                force_close()
        return body

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)
