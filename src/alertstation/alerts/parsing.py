"""Shared parsing ground: the error type, size limits, hardened XML, timestamps.

The dispatcher that picks a parser for a body, ``parse_any``, is ``alertstation.alerts.dispatch``.

Untrusted XML goes through two walls before any field is read:

1. ``split_documents`` runs the stdlib expat parser over the bytes with a handler that refuses a
   document type declaration the moment one starts. Without a DOCTYPE there can be no entity
   declarations, so no external entity, no parameter entity and no entity-expansion bomb; expat
   never fetches anything. The same pass checks well-formedness and finds where one document
   ends and the next begins (for feeds that are several ``<alert>`` documents back to back).
2. ``parse_xml_document`` builds the lxml tree with entity resolution, DTD loading and network
   access off, ``huge_tree`` off, and a resolver that answers every external load with an empty
   document, then refuses any tree that still carries a DTD.

Size limits are checked on the raw bytes before either pass.

A plain message (one unsigned CAP ``<alert>`` in UTF-8) is read instead by the compiled expat
pass of ``alertstation.alerts.capfast``, which refuses a DOCTYPE the same way and declines
anything it is not sure to read as these two walls would; what it declines comes here.
"""

from __future__ import annotations

import functools
import re
import threading
from datetime import UTC, datetime
from xml.parsers import expat

from alertstation import lazy

etree = lazy.module("lxml.etree")

#: Largest single CAP message accepted (bytes). Real agency messages are a few kilobytes;
#: the longest hurricane statements stay well under 200 KiB.
MAX_MESSAGE_BYTES = 2 * 1024 * 1024
#: Largest feed accepted (bytes): the agency's nationwide JSON feed on a busy day is a few MiB.
MAX_FEED_BYTES = 16 * 1024 * 1024
#: Most entries (documents, wrapped alerts, ATOM entries, JSON features) one feed may hold; the
#: nationwide feed holds hundreds to a few thousand.
MAX_FEED_ENTRIES = 10_000

_NON_SPACE = re.compile(rb"[^ \t\r\n]")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d)", re.ASCII)


class AlertParseError(ValueError):
    """Signal that a message or feed cannot be parsed; the message says exactly why."""


class _DoctypeRefused(Exception):
    """Stop expat at once from inside its DOCTYPE handler."""


def check_size(data: bytes, limit: int, what: str) -> None:
    """Raise AlertParseError when ``data`` is longer than ``limit`` bytes."""
    if len(data) > limit:
        raise AlertParseError(
            f"{what} is {len(data)} bytes, over the limit of {limit} bytes; refused unread"
        )


def as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    """Return ``data`` as bytes (text is encoded as UTF-8); AlertParseError for other types."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise AlertParseError(f"expected bytes or text, got {type(data).__name__}")


def split_documents(data: bytes, max_documents: int = MAX_FEED_ENTRIES) -> list[bytes]:
    """Check ``data`` is one or more well-formed XML documents without DOCTYPE; return each.

    Raises AlertParseError for a DOCTYPE anywhere, malformed XML, an empty body or more than
    ``max_documents`` documents.
    """
    documents: list[bytes] = []
    view = memoryview(data)
    start = 0
    while _NON_SPACE.search(data, start):
        if len(documents) == max_documents:
            raise AlertParseError(f"more than {max_documents} XML documents in one body")
        end = start + _screen(view[start:], offset=start)
        documents.append(data[start:end])
        start = end
    if not documents:
        raise AlertParseError("empty body: no XML document")
    return documents


def _screen(data: memoryview, offset: int) -> int:
    """Run expat over ``data``; return where the first document ends (len(data) if at the end).

    The bytes are fed in growing chunks so that finding the end of a small document at the
    head of a large body costs about the size of that document, not of the whole body.
    """
    try:
        return _screen_pass(data, offset, track=False)
    except _NextDocument:
        # Only now is the depth needed (a misplaced XML declaration inside the root element is
        # an error, after it the start of the next document): screen again, counting elements.
        return _screen_pass(data, offset, track=True)


class _NextDocument(Exception):
    """Tell that expat stopped where another document may start (checked with the depth)."""


def _refuse_doctype(*_args: object) -> None:
    raise _DoctypeRefused


def _screen_pass(data: memoryview, offset: int, *, track: bool) -> int:
    """One expat pass of ``_screen``; without ``track``, no per-element callback runs."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    depth = [0, 0]  # current depth, number of root elements closed

    def start(*_args: object) -> None:
        depth[0] += 1

    def end(*_args: object) -> None:
        depth[0] -= 1
        if depth[0] == 0:
            depth[1] += 1

    parser.StartDoctypeDeclHandler = _refuse_doctype
    if track:
        parser.StartElementHandler = start
        parser.EndElementHandler = end
    where = f" (document starting at byte {offset})" if offset else ""
    try:
        fed, chunk = 0, 4096
        while True:
            piece = data[fed : fed + chunk]
            fed += len(piece)
            parser.Parse(piece, fed >= len(data))
            if fed >= len(data):
                break
            chunk = min(chunk * 2, 1 << 20)
    except _DoctypeRefused:
        raise AlertParseError(
            f"XML has a DOCTYPE declaration (near byte {offset + parser.CurrentByteIndex}); "
            "documents with a DTD are refused (no entities, no external references)"
        ) from None
    except expat.ExpatError as ex:
        # After a complete root element, another root or XML declaration starts a new document.
        if ex.code in _NEXT_DOCUMENT_CODES and not track:
            raise _NextDocument from None
        if depth[1] and depth[0] == 0 and ex.code in _NEXT_DOCUMENT_CODES:
            return parser.ErrorByteIndex
        raise AlertParseError(
            f"malformed XML at line {ex.lineno}, column {ex.offset}{where}: "
            f"{expat.ErrorString(ex.code)}"
        ) from None
    except (ValueError, LookupError, RecursionError) as ex:
        # LookupError: an encoding declaration naming no known codec.
        raise AlertParseError(f"unreadable XML{where}: {ex}") from None
    return len(data)


_NEXT_DOCUMENT_CODES = frozenset(
    {
        expat.errors.codes[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT],
        expat.errors.codes[expat.errors.XML_ERROR_MISPLACED_XML_PI],
    }
)


@functools.cache
def _no_external() -> type:
    """Return the resolver class (defined on first use: lxml is imported then)."""

    class _NoExternal(etree.Resolver):
        """Answer every external load libxml2 asks for with an empty document."""

        def resolve(self, system_url: str, public_id: str, context: object) -> object:
            return self.resolve_string("", context)

    return _NoExternal


def hardened_parser() -> etree.XMLParser:
    """Return a new lxml parser that loads nothing from outside the given bytes."""
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        collect_ids=False,
    )
    parser.resolvers.add(_no_external()())
    return parser


_parsers = threading.local()


def _thread_parser() -> etree.XMLParser:
    """Return this thread's hardened parser (an lxml parser may serve one thread at a time)."""
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = hardened_parser()
    return parser


def parse_xml_document(document: bytes) -> etree._Element:
    """Parse one screened document with the hardened parser; refuse any DTD it still has."""
    try:
        root = etree.fromstring(document, _thread_parser())
    except etree.XMLSyntaxError as ex:
        raise AlertParseError(f"malformed XML: {ex}") from None
    except (ValueError, etree.LxmlError) as ex:
        raise AlertParseError(f"unreadable XML: {ex}") from None
    info = root.getroottree().docinfo
    if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
        raise AlertParseError("XML has a DOCTYPE declaration; documents with a DTD are refused")
    return root


def decode_text(document: bytes, encoding: str | None = None) -> str:
    """Return the document as text: UTF-8 first, then its declared encoding, never failing."""
    try:
        return document.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return document.decode(encoding or "utf-8", "replace")
    except LookupError:
        return document.decode("utf-8", "replace")


def parse_timestamp(text: str, what: str) -> datetime:
    """Parse a CAP/ISO 8601 timestamp with a UTC offset into an aware UTC datetime.

    A batch repeats the same few timestamps (a feed's messages share their sent and expiry
    minutes): the result of each text is kept (``_known_timestamp``), and only a text not seen
    yet, or a bad one, goes through ``strict_timestamp``.
    """
    if type(text) is str:
        known = _known_timestamp(text)
        if known is not None:
            return known
    return strict_timestamp(text, what)


@functools.lru_cache(maxsize=4096)
def _known_timestamp(text: str) -> datetime | None:
    """``strict_timestamp`` of ``text``, or None when it is not a valid timestamp."""
    try:
        return strict_timestamp(text, "")
    except AlertParseError:
        return None


def strict_timestamp(text: str, what: str) -> datetime:
    """Parse a timestamp as ``parse_timestamp`` does, without keeping anything."""
    value = text.strip() if isinstance(text, str) else text
    if not isinstance(value, str) or not _TIMESTAMP.fullmatch(value):
        raise AlertParseError(
            f"{what}: {str(value)[:60]!r} is not a timestamp with a UTC offset "
            "(YYYY-MM-DDThh:mm:ss+hh:mm)"
        )
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except (ValueError, OverflowError) as ex:
        raise AlertParseError(f"{what}: {value!r} is not a valid time ({ex})") from None
