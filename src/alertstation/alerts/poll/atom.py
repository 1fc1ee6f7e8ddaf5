"""Read an ATOM feed of CAP alerts for the poller: entries that embed an alert or link to one.

The feed passes the same hardened path as any alert XML (``alertstation.alerts.parsing``: size
limit, DOCTYPE refusal, no external loads). An embedded alert is serialised as the standalone
document it was signed as (as ``alertstation.alerts.cap`` does), so its signature still checks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from urllib.parse import urlsplit
from xml.parsers import expat

from alertstation import lazy
from alertstation.alerts.cap import ATOM_NS, is_cap_alert
from alertstation.alerts.parsing import (
    MAX_FEED_BYTES,
    AlertParseError,
    check_size,
    parse_xml_document,
    split_documents,
)

etree = lazy.module("lxml.etree")

_ATOM_FEED = f"{ATOM_NS} feed"


@dataclass(frozen=True)
class AtomEntry:
    """One entry: its position, the embedded alert document, or the link to it."""

    position: int
    alert: bytes | None
    link: str


class _Root(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def root_element(body: bytes) -> str | None:
    """Return the first element's name (``namespace localname``) of an XML body, else None."""
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<"):
        return None
    parser = expat.ParserCreate(namespace_separator=" ")

    def start(name: str, _attrs: object) -> None:
        raise _Root(name)

    def refuse(*_args: object) -> None:
        raise _Root("")

    parser.StartElementHandler = start
    parser.StartDoctypeDeclHandler = refuse
    try:
        for offset in range(0, len(body), 4096):
            parser.Parse(body[offset : offset + 4096], offset + 4096 >= len(body))
    except _Root as found:
        return found.name or None
    except (expat.ExpatError, ValueError, LookupError):
        return None
    return None


def atom_entries(body: bytes) -> list[AtomEntry] | AlertParseError | None:
    """Read an ATOM feed's entries; None when the body is not ATOM (or not XML)."""
    if root_element(body) != _ATOM_FEED:
        return None
    try:
        check_size(body, MAX_FEED_BYTES, "ATOM feed")
        if len(split_documents(body)) != 1:
            raise AlertParseError("an ATOM feed must be one XML document")
        root = parse_xml_document(body)
    except AlertParseError as ex:
        return ex
    return [
        _entry(position, entry)
        for position, entry in enumerate(root.iterfind(f"{{{ATOM_NS}}}entry"))
    ]


def _entry(position: int, entry: etree._Element) -> AtomEntry:
    embedded = next((el for el in entry.iter() if is_cap_alert(el)), None)
    if embedded is not None:
        # The alert as the standalone document it was signed as (see cap._standalone).
        document = etree.tostring(
            copy.deepcopy(embedded), encoding="utf-8", xml_declaration=False, with_tail=False
        )
        return AtomEntry(position, document, "")
    links = entry.findall(f"{{{ATOM_NS}}}link")
    preferred = [link for link in links if link.get("rel", "alternate") == "alternate"]
    hrefs = (link.get("href", "").strip() for link in preferred + links)
    return AtomEntry(position, None, next((href for href in hrefs if _is_url(href)), ""))


def _is_url(href: str) -> bool:
    """Tell whether ``href`` is a URL the poller can resolve: no broken IPv6 host, a real port."""
    if not href:
        return False
    try:
        _ = urlsplit(href).port  # raises for "http://[::1" and for ports outside 0-65535
    except ValueError:
        return False
    return True
