"""The CAP field reader as it was before the one-pass reader (2.8.0), kept as a reference.

``tests/alerts/test_cap_fast_read.py`` holds ``cap.alert_from_element`` to what this reader
returns and rejects, message by message and error by error. Do not "improve" it: it is the
behaviour the fast reader must keep.
"""

from __future__ import annotations

from datetime import datetime

from lxml import etree

from alertstation.alerts.cap import parse_references
from alertstation.alerts.model import MSG_TYPES, SCOPES, STATUSES, Alert, AlertInfo, Area, Source
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.parsing import strict_timestamp as parse_timestamp
from alertstation.alerts.vtec import parse_vtec_strings


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
