"""CAP 1.2 and 1.1 XML messages, and XML feeds of them (IPAWS ``<alerts>``, back-to-back
documents, ATOM), parsed into ``Alert``.

Every document passes the hardened path of ``alertstation.alerts.parsing`` first (size limit,
DOCTYPE refusal, no external loads). A message's signature is checked with
``alertstation.alerts.signature`` after its fields parse.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from alertstation import lazy
from alertstation.alerts.capfast import fast_fields
from alertstation.alerts.model import (
    MSG_TYPES,
    SCOPES,
    STATUSES,
    UNSIGNED,
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

etree = lazy.module("lxml.etree")

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
    alert = _fast_alert(raw, source)
    if alert is not None:
        return alert
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
    fields = _read_alert(root)
    return Alert.from_infos(
        **fields,
        source=source,
        raw=_document_text(raw, root),
        signature=check_signature(raw, root, trust),
    )


def _fast_alert(raw: bytes, source: Source) -> Alert | None:
    """The alert of a plain, unsigned message read by the compiled reader (``capfast``).

    None when that reader declines the message or its fields do not check: the full path then
    reads it again and names the problem exactly as it always has.
    """
    found = fast_fields(raw)
    if found is None:
        return None
    fields, text = found
    try:
        header = _build_alert(fields)
    except AlertParseError:
        return None
    return Alert.from_infos(**header, source=source, raw=text, signature=UNSIGNED)


def _document_text(raw: bytes, root: etree._Element) -> str:
    """The document as text (``decode_text``); its declared encoding is looked up only if needed."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return decode_text(raw, root.getroottree().docinfo.encoding)


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
    alert = _fast_alert(raw, "cap-xml")
    if alert is not None:
        return [alert]
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


#: The full tags of CAP 1.2 and 1.1 ``<alert>`` (``{namespace}alert``).
_CAP_ALERT_TAGS = frozenset(f"{{{namespace}}}alert" for namespace in CAP_NAMESPACES)


def is_cap_alert(element: etree._Element) -> bool:
    """Tell whether ``element`` is a CAP 1.2 or 1.1 ``<alert>`` (its full tag, compared once)."""
    tag = element.tag  # comments and PIs: not a str, never in the set
    return isinstance(tag, str) and tag in _CAP_ALERT_TAGS


def alert_from_element(element: etree._Element, *, source: Source, raw: str) -> Alert:
    """Read the fields of a parsed CAP ``<alert>`` element into an ``Alert`` (unsigned)."""
    return Alert.from_infos(**_read_alert(element), source=source, raw=raw)


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


# Reading is two steps. The first, ``read_fields``, walks the tree once and returns its raw
# fields: each element's children are walked once, a child whose tag (in the alert's namespace)
# names a field is dispatched by a table, the text of a single-valued field is read once from its
# first occurrence, and repeated fields (info, area, category, geocode, ...) are read in order.
# Elements of other namespaces, comments and processing instructions match no entry. The
# compiled reader of ``alertstation.alerts.capfast`` returns the same fields straight from the
# bytes. The second step, ``_build_alert``, checks and converts them. What the two return and
# reject is what the per-field reader of 2.8.0 did (tests/alerts/cap_reference.py holds it to that).

_ALERT_ONE = ("identifier", "sender", "sent", "status", "msgType", "scope", "references", "note")
_ALERT_ONE += ("incidents",)
_ALERT_MANY = ("info",)
_INFO_ONE = ("language", "event", "urgency", "severity", "certainty", "effective", "onset")
_INFO_ONE += ("expires", "senderName", "headline", "description", "instruction", "web")
_INFO_MANY = ("category", "responseType", "eventCode", "parameter", "area")
_AREA_ONE = ("areaDesc",)
_AREA_MANY = ("polygon", "circle", "geocode")


class _Table(NamedTuple):
    """One element kind's dispatch: full tag -> field name, for single and repeated fields."""

    one: dict[str, str]
    many: dict[str, str]


class _Tables(NamedTuple):
    """The dispatch tables of one namespace, and the full tags of valueName and value."""

    alert: _Table
    info: _Table
    area: _Table
    value_name: str
    value: str


@functools.lru_cache(maxsize=16)
def _tables(namespace: str) -> _Tables:
    prefix = f"{{{namespace}}}" if namespace else ""

    def table(one: tuple[str, ...], many: tuple[str, ...]) -> _Table:
        return _Table({prefix + n: n for n in one}, {prefix + n: n for n in many})

    return _Tables(
        table(_ALERT_ONE, _ALERT_MANY),
        table(_INFO_ONE, _INFO_MANY),
        table(_AREA_ONE, _AREA_MANY),
        prefix + "valueName",
        prefix + "value",
    )


def _text(element: etree._Element) -> str:
    """The element's text stripped: its own text for a leaf, all text inside it otherwise."""
    if len(element):  # child elements, comments or PIs: every piece of text inside, joined
        return "".join(element.itertext()).strip()
    text = element.text
    return text.strip() if text else ""


def _scan(parent: etree._Element, table: _Table) -> dict[str, Any]:
    """Walk ``parent``'s children once: first text of single fields, elements of repeated ones.

    A single field absent is absent from the result, and so is a repeated one.
    """
    found: dict[str, Any] = {}
    one, many = table
    for child in parent:
        tag = child.tag  # comments/PIs: a non-str tag, in no table
        name = one.get(tag)
        if name is not None:
            if name not in found:
                if len(child):  # _text, inlined: this loop runs for every field of a message
                    found[name] = "".join(child.itertext()).strip()
                else:
                    text = child.text
                    found[name] = text.strip() if text else ""
            continue
        name = many.get(tag)
        if name is not None:
            elements = found.get(name)
            if elements is None:
                found[name] = [child]
            else:
                elements.append(child)
    return found


def _pairs(elements: list[etree._Element], tables: _Tables) -> list[tuple[str, str]]:
    """Read ``valueName``/``value`` children (eventCode, parameter, geocode): the first of each."""
    name_tag, value_tag = tables.value_name, tables.value
    pairs = []
    for element in elements:
        key = value = None
        for child in element:
            tag = child.tag
            if tag == name_tag:
                if key is None:
                    if len(child):  # _text, inlined (this loop runs for every pair read)
                        key = "".join(child.itertext()).strip()
                    else:
                        text = child.text
                        key = text.strip() if text else ""
            elif tag == value_tag and value is None:
                if len(child):
                    value = "".join(child.itertext()).strip()
                else:
                    text = child.text
                    value = text.strip() if text else ""
        pairs.append((key or "", value or ""))
    return pairs


def read_fields(element: etree._Element) -> dict[str, Any]:
    """Read a CAP ``<alert>`` element's raw fields, unchecked.

    Single fields map to their stripped text. ``info`` is a list of dicts of the same shape, and
    so is each info's ``area``. ``category``, ``responseType``, ``polygon`` and ``circle`` are
    lists of stripped texts (blank ones included); ``eventCode``, ``parameter`` and ``geocode``
    are lists of ``(valueName, value)`` pairs. A field that does not occur is not in its dict.
    """
    tag = element.tag  # "{namespace}alert", or "alert" without a namespace
    tables = _tables(tag[1 : tag.index("}")] if tag[:1] == "{" else "")
    found = _scan(element, tables.alert)
    infos = found.get("info")
    if infos:
        found["info"] = [_info_fields(tables, info) for info in infos]
    return found


def _info_fields(tables: _Tables, element: etree._Element) -> dict[str, Any]:
    found = _fields(element, tables.info, tables, ("category", "responseType"))
    if "area" in found:
        found["area"] = [
            _fields(area, tables.area, tables, ("polygon", "circle")) for area in found["area"]
        ]
    return found


_PAIRED = ("eventCode", "parameter", "geocode")


def _fields(
    element: etree._Element, table: _Table, tables: _Tables, texts: tuple[str, ...]
) -> dict[str, Any]:
    """``_scan`` of an info or area, with its repeated texts and pairs read."""
    found = _scan(element, table)
    for name in texts:
        if name in found:
            found[name] = [_text(child) for child in found[name]]
    for name in _PAIRED:
        if name in found:
            found[name] = _pairs(found[name], tables)
    return found


def _texts(values: list[str] | None) -> tuple[str, ...]:
    return tuple(value for value in values if value) if values else ()


def _required(found: dict[str, Any], name: str) -> str:
    value = found.get(name)
    if not value:
        raise AlertParseError(f"alert has no <{name}> (required by CAP)")
    return value


def _choice(found: dict[str, Any], name: str, allowed: frozenset[str]) -> str:
    value = _required(found, name)
    if value not in allowed:
        raise AlertParseError(
            f"<{name}> is {value[:40]!r}; CAP allows {', '.join(sorted(allowed))}"
        )
    return value


def _time(found: dict[str, Any], name: str, what: str) -> datetime | None:
    value = found.get(name)
    return parse_timestamp(value, what) if value else None


def _read_alert(element: etree._Element) -> dict[str, Any]:
    """Read an ``<alert>``'s fields as the keyword arguments of ``Alert.from_infos``."""
    return _build_alert(read_fields(element))


def _build_alert(found: dict[str, Any]) -> dict[str, Any]:
    """Check and convert the raw fields of ``read_fields`` into ``Alert.from_infos`` arguments.

    Errors come in the order the per-field reader raised them: sent, then each info block,
    then identifier, sender, status, msgType, scope and references.
    """
    sent = _time(found, "sent", "alert sent")
    if sent is None:
        raise AlertParseError("alert has no <sent> time")
    infos = tuple(_info(info, position) for position, info in enumerate(found.get("info", ())))
    return {
        "infos": infos,
        "identifier": _required(found, "identifier"),
        "sender": _required(found, "sender"),
        "sent": sent,
        "status": _choice(found, "status", STATUSES),
        "msg_type": _choice(found, "msgType", MSG_TYPES),
        "scope": _choice(found, "scope", SCOPES),
        "references": parse_references(found.get("references", "")),
        "note": found.get("note", ""),
        "incidents": tuple(found.get("incidents", "").split()),
    }


def _info(found: dict[str, Any], position: int) -> AlertInfo:
    where = f"info {position}"
    parameters = tuple(found.get("parameter", ()))
    vtec_values = [value for key, value in parameters if key == "VTEC"]
    try:
        vtec = parse_vtec_strings(vtec_values) if vtec_values else ()
    except ValueError as ex:
        raise AlertParseError(f"{where} parameter VTEC: {ex}") from None
    ending = next((value for key, value in parameters if key == "eventEndingTime" and value), "")
    return AlertInfo(
        found.get("language") or "en-US",
        _texts(found.get("category")),
        found.get("event", ""),
        _texts(found.get("responseType")),
        found.get("urgency", ""),
        found.get("severity", ""),
        found.get("certainty", ""),
        tuple(found.get("eventCode", ())),
        _time(found, "effective", f"{where} effective"),
        _time(found, "onset", f"{where} onset"),
        _time(found, "expires", f"{where} expires"),
        parse_timestamp(ending, f"{where} eventEndingTime") if ending else None,
        found.get("senderName", ""),
        found.get("headline", ""),
        found.get("description", ""),
        found.get("instruction", ""),
        found.get("web", ""),
        parameters,
        vtec,
        tuple(_area(area) for area in found.get("area", ())),
    )


def _area(found: dict[str, Any]) -> Area:
    # One code per geocode in CAP; a value holding several (old summaries) is split on spaces.
    geocodes = tuple(
        (name, code) for name, value in found.get("geocode", ()) for code in value.split()
    )
    return Area(
        found.get("areaDesc", ""),
        _texts(found.get("polygon")),
        _texts(found.get("circle")),
        geocodes,
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
