"""Pick the parser for a body: a CAP message, an XML feed (ATOM, IPAWS) or the JSON feed.

The parsers (``cap``, ``jsonfeed``) share ``alertstation.alerts.parsing``; this module sits above
them all, so the shared ground never imports its own users.
"""

from __future__ import annotations

from alertstation.alerts.cap import parse_cap_feed
from alertstation.alerts.jsonfeed import parse_json_feed
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError, as_bytes
from alertstation.alerts.signature import TrustAnchors

_JSON_TYPES = ("json",)
_XML_TYPES = ("xml", "cap", "atom")


def parse_any(
    data: bytes | str, content_type: str | None = None, *, trust: TrustAnchors | None = None
) -> list[Alert | ParseProblem]:
    """Parse a CAP message, an XML feed (ATOM, IPAWS) or the agency's JSON feed.

    ``content_type`` (a Content-Type header) picks the parser when it says JSON or XML;
    otherwise the first non-blank byte decides. ``trust`` is passed to the XML parsers for
    signature checks (a ``signature.TrustAnchors``).
    """
    raw = as_bytes(data)
    kind = _kind_from_content_type(content_type) or _kind_from_bytes(raw)
    if kind == "json":
        return parse_json_feed(raw)
    return parse_cap_feed(raw, trust=trust)


def _kind_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    media = content_type.split(";")[0].strip().lower()
    if any(token in media for token in _JSON_TYPES):
        return "json"
    if any(token in media for token in _XML_TYPES):
        return "xml"
    return None


def _kind_from_bytes(data: bytes) -> str:
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"{", b"["):
        return "json"
    if head[:1] == b"<" or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "xml"
    raise AlertParseError(
        "cannot tell the format: the body starts with neither '<' (XML) nor '{' or '[' (JSON)"
    )
