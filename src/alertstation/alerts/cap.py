"""CAP 1.2 and 1.1 XML messages, and XML feeds of them (IPAWS ``<alerts>``, back-to-back
documents, ATOM), parsed into ``Alert``.

Every document passes the hardened path of ``alertstation.alerts.parsing`` first (size limit,
DOCTYPE refusal, no external loads). A message's signature is checked with
``alertstation.alerts.signature`` after its fields parse.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from lxml import etree

from alertstation.alerts.model import (
    MSG_TYPES,
    SCOPES,
    STATUSES,
    Alert,
    AlertInfo,
    Area,
    ParseProblem,
    Reference,
    Source,
)
from alertstation.alerts.parsing import (
    MAX_FEED_BYTES,
    MAX_FEED_ENTRIES,
    MAX_MESSAGE_BYTES,
    AlertParseError,
    as_bytes,
    check_size,
    decode_text,
    parse_timestamp,
    parse_xml_document,
    split_documents,
)
from alertstation.alerts.signature import TrustAnchors, check_signature
from alertstation.alerts.vtec import parse_vtec_strings

CAP_NAMESPACES = {
    "urn:oasis:names:tc:emergency:cap:1.2": "1.2",
    "urn:oasis:names:tc:emergency:cap:1.1": "1.1",
}
ATOM_NS = "http://www.w3.org/2005/Atom"


def parse_cap_xml(
    data: bytes | str, *, trust: TrustAnchors | None = None, source: Source = "cap-xml"
) -> Alert:
    """Parse one CAP 1.2 or 1.1 ``<alert>`` document and check its signature.

    ``trust`` holds the anchors a signing certificate must chain to; without it a signed
    message is never "verified". Raises AlertParseError with the reason.
    """
    raw = as_bytes(data)
    check_size(raw, MAX_MESSAGE_BYTES, "CAP message")
    documents = split_documents(raw)
    if len(documents) != 1:
        raise AlertParseError(
            f"expected one CAP document, found {len(documents)}; use parse_cap_feed for feeds"
        )
    return _alert_from_document(raw, parse_xml_document(raw), trust, source)


def _alert_from_document(
    raw: bytes, root: etree._Element, trust: TrustAnchors | None, source: Source
) -> Alert:
    """Read one screened and parsed CAP document (``raw`` is its bytes) and check its signature."""
    if not is_cap_alert(root):
        raise AlertParseError(f"root element is {_describe(root)}, not a CAP 1.2 or 1.1 <alert>")
    encoding = root.getroottree().docinfo.encoding
    alert = alert_from_element(root, source=source, raw=decode_text(raw, encoding))
    return replace(alert, signature=check_signature(raw, root, trust))


def parse_cap_feed(
    data: bytes | str, *, trust: TrustAnchors | None = None
) -> list[Alert | ParseProblem]:
    """Parse an XML feed: one CAP alert, an IPAWS ``<alerts>`` wrapper, several ``<alert>``
    documents back to back, or an ATOM feed whose entries embed ``<alert>``.

    A bad entry becomes a ``ParseProblem`` (its position and reason) and the rest still parse;
    AlertParseError is raised only when the body as a whole is unusable.
    """
    raw = as_bytes(data)
    check_size(raw, MAX_FEED_BYTES, "CAP feed")
    documents = split_documents(raw)
    if len(documents) > 1:
        return [
            _entry(position, lambda d=document: parse_cap_xml(d, trust=trust, source="ipaws"))
            for position, document in enumerate(documents)
        ]
    root = parse_xml_document(raw)
    if is_cap_alert(root):
        # Screened and parsed once: read the alert from this tree (no second parse).
        return [_entry(0, lambda: _alert_from_document(raw, root, trust, "cap-xml"), root)]
    name = etree.QName(root)
    if name.localname == "alerts":
        return _wrapper_entries(root, trust)
    if name.namespace == ATOM_NS and name.localname in ("feed", "entry"):
        entries = [root] if name.localname == "entry" else root.findall(f"{{{ATOM_NS}}}entry")
        _check_count(len(entries))
        return [_atom_entry(position, entry, trust) for position, entry in enumerate(entries)]
    raise AlertParseError(
        f"root element is {_describe(root)}: not a CAP alert, an <alerts> wrapper or an ATOM feed"
    )


def is_cap_alert(element: etree._Element) -> bool:
    """Tell whether ``element`` is a CAP 1.2 or 1.1 ``<alert>``."""
    if not isinstance(element.tag, str):
        return False
    name = etree.QName(element)
    return name.localname == "alert" and name.namespace in CAP_NAMESPACES


def alert_from_element(element: etree._Element, *, source: Source, raw: str) -> Alert:
    """Read the fields of a parsed CAP ``<alert>`` element into an ``Alert`` (unsigned)."""
    read = _Reader(etree.QName(element).namespace or "")
    sent = read.time(element, "sent", "alert sent")
    if sent is None:
        raise AlertParseError("alert has no <sent> time")
    infos = tuple(
        _info(read, info, position) for position, info in enumerate(read.children(element, "info"))
    )
    return Alert.from_infos(
        infos=infos,
        identifier=read.required(element, "identifier"),
        sender=read.required(element, "sender"),
        sent=sent,
        status=read.choice(element, "status", STATUSES),
        msg_type=read.choice(element, "msgType", MSG_TYPES),
        scope=read.choice(element, "scope", SCOPES),
        references=parse_references(read.text(element, "references")),
        note=read.text(element, "note"),
        incidents=tuple(read.text(element, "incidents").split()),
        source=source,
        raw=raw,
    )


def parse_references(text: str) -> tuple[Reference, ...]:
    """Parse CAP ``references``: whitespace-separated ``sender,identifier,sent`` triples."""
    found = []
    for token in text.split():
        parts = token.split(",")
        if len(parts) != 3 or not parts[0] or not parts[1]:
            raise AlertParseError(
                f"references entry {token[:120]!r} is not 'sender,identifier,sent'"
            )
        sent = parse_timestamp(parts[2], f"references entry {parts[1][:80]!r}")
        found.append(Reference(parts[0], parts[1], sent))
    return tuple(found)


class _Reader:
    """Read CAP child elements of one namespace as stripped text."""

    def __init__(self, namespace: str) -> None:
        self.prefix = f"{{{namespace}}}" if namespace else ""
        # Each element's children by tag, built in one pass the first time it is read: a
        # message reads about 30 fields, and one walk is cheaper than 30 path searches.
        self._index: dict[etree._Element, dict[str, list[etree._Element]]] = {}

    def children(self, parent: etree._Element, name: str) -> list[etree._Element]:
        index = self._index.get(parent)
        if index is None:
            index = self._index[parent] = {}
            for child in parent:
                index.setdefault(child.tag, []).append(child)  # comments/PIs: a non-str tag
        return index.get(self.prefix + name, [])

    def texts(self, parent: etree._Element, name: str) -> tuple[str, ...]:
        values = ("".join(child.itertext()).strip() for child in self.children(parent, name))
        return tuple(value for value in values if value)

    def text(self, parent: etree._Element, name: str) -> str:
        found = self.children(parent, name)
        if not found:
            return ""
        child = found[0]
        if not len(child):  # a leaf (no child elements, comments or PIs): its own text only
            return (child.text or "").strip()
        return "".join(child.itertext()).strip()

    def required(self, parent: etree._Element, name: str) -> str:
        value = self.text(parent, name)
        if not value:
            raise AlertParseError(f"alert has no <{name}> (required by CAP)")
        return value

    def choice(self, parent: etree._Element, name: str, allowed: frozenset[str]) -> str:
        value = self.required(parent, name)
        if value not in allowed:
            raise AlertParseError(
                f"<{name}> is {value[:40]!r}; CAP allows {', '.join(sorted(allowed))}"
            )
        return value

    def time(self, parent: etree._Element, name: str, what: str) -> datetime | None:
        value = self.text(parent, name)
        return parse_timestamp(value, what) if value else None

    def pairs(self, parent: etree._Element, name: str) -> tuple[tuple[str, str], ...]:
        """Read ``valueName``/``value`` children (eventCode, parameter, geocode)."""
        return tuple(
            (self.text(child, "valueName"), self.text(child, "value"))
            for child in self.children(parent, name)
        )


def _info(read: _Reader, element: etree._Element, position: int) -> AlertInfo:
    where = f"info {position}"
    parameters = read.pairs(element, "parameter")
    vtec_values = [value for key, value in parameters if key == "VTEC"]
    try:
        vtec = parse_vtec_strings(vtec_values)
    except ValueError as ex:
        raise AlertParseError(f"{where} parameter VTEC: {ex}") from None
    ending = next((value for key, value in parameters if key == "eventEndingTime" and value), "")
    return AlertInfo(
        language=read.text(element, "language") or "en-US",
        categories=read.texts(element, "category"),
        event=read.text(element, "event"),
        response_types=read.texts(element, "responseType"),
        urgency=read.text(element, "urgency"),
        severity=read.text(element, "severity"),
        certainty=read.text(element, "certainty"),
        event_codes=read.pairs(element, "eventCode"),
        effective=read.time(element, "effective", f"{where} effective"),
        onset=read.time(element, "onset", f"{where} onset"),
        expires=read.time(element, "expires", f"{where} expires"),
        ends=parse_timestamp(ending, f"{where} eventEndingTime") if ending else None,
        sender_name=read.text(element, "senderName"),
        headline=read.text(element, "headline"),
        description=read.text(element, "description"),
        instruction=read.text(element, "instruction"),
        web=read.text(element, "web"),
        parameters=parameters,
        vtec=vtec,
        areas=tuple(_area(read, area) for area in read.children(element, "area")),
    )


def _area(read: _Reader, element: etree._Element) -> Area:
    # One code per geocode in CAP; a value holding several (old summaries) is split on spaces.
    geocodes = tuple(
        (name, code) for name, value in read.pairs(element, "geocode") for code in value.split()
    )
    return Area(
        desc=read.text(element, "areaDesc"),
        polygons=read.texts(element, "polygon"),
        circles=read.texts(element, "circle"),
        geocodes=geocodes,
    )


def _entry(
    position: int, parse: Callable[[], Alert], element: etree._Element | None = None
) -> Alert | ParseProblem:
    try:
        return parse()
    except AlertParseError as ex:
        return ParseProblem(position, str(ex), identifier=_identifier_of(element))


def _standalone(element: etree._Element) -> bytes:
    """Serialise an alert found inside a wrapper as the document it was signed as.

    ``deepcopy`` keeps the namespace declarations the element uses or declares itself and
    drops the wrapper's unused ones, which inclusive canonicalisation would otherwise count.
    """
    return etree.tostring(
        copy.deepcopy(element), encoding="utf-8", xml_declaration=False, with_tail=False
    )


def _wrapper_entries(
    root: etree._Element, trust: TrustAnchors | None
) -> list[Alert | ParseProblem]:
    results: list[Alert | ParseProblem] = []
    children = [child for child in root if isinstance(child.tag, str)]
    _check_count(len(children))
    for position, child in enumerate(children):
        if not is_cap_alert(child):
            problem = f"entry is {_describe(child)}, not a CAP alert"
            results.append(ParseProblem(position, problem))
            continue
        document = _standalone(child)
        results.append(
            _entry(
                position, lambda d=document: parse_cap_xml(d, trust=trust, source="ipaws"), child
            )
        )
    return results


def _atom_entry(
    position: int, entry: etree._Element, trust: TrustAnchors | None
) -> Alert | ParseProblem:
    embedded = next((el for el in entry.iter() if is_cap_alert(el)), None)
    if embedded is not None:
        document = _standalone(embedded)
        return _entry(position, lambda: parse_cap_xml(document, trust=trust), embedded)
    entry_id = (entry.findtext(f"{{{ATOM_NS}}}id") or "").strip()
    links = entry.findall(f"{{{ATOM_NS}}}link")
    preferred = [link for link in links if link.get("rel", "alternate") == "alternate"]
    href = next((link.get("href", "") for link in preferred + links if link.get("href")), "")
    reason = "ATOM entry embeds no CAP <alert>"
    reason += f"; the message is at {href}" if href else " and links to none"
    return ParseProblem(position, reason, identifier=entry_id[:200], link=href)


def _check_count(count: int) -> None:
    if count > MAX_FEED_ENTRIES:
        raise AlertParseError(f"feed has {count} entries, over the limit of {MAX_FEED_ENTRIES}")


def _identifier_of(element: etree._Element | None) -> str:
    if element is None:
        return ""
    namespace = etree.QName(element).namespace
    value = element.findtext(f"{{{namespace}}}identifier" if namespace else "identifier")
    return (value or "").strip()[:200]


def _describe(element: etree._Element) -> str:
    if not isinstance(element.tag, str):
        return "not an element"
    name = etree.QName(element)
    where = f" in namespace {name.namespace!r}" if name.namespace else " (no namespace)"
    return f"<{name.localname}>{where}"
