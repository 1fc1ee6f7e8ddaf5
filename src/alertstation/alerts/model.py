"""The one normalised alert shape every parser returns, and its parts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, NamedTuple

from alertstation.alerts.vtec import EventKey, Vtec

Source = Literal["cap-xml", "json-api", "ipaws"]
SOURCES: tuple[Source, ...] = ("cap-xml", "json-api", "ipaws")
SignatureStatus = Literal["verified", "unsigned", "failed"]

STATUSES = frozenset({"Actual", "Exercise", "System", "Test", "Draft"})
MSG_TYPES = frozenset({"Alert", "Update", "Cancel", "Ack", "Error"})
SCOPES = frozenset({"Public", "Restricted", "Private"})


class Reference(NamedTuple):
    """Name an earlier message: CAP's ``sender,identifier,sent`` triple."""

    sender: str
    identifier: str
    sent: datetime


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """Record the outcome of checking a message's XML signature, with the reason."""

    status: SignatureStatus
    reason: str = ""

    @property
    def verified(self) -> bool:
        """Tell whether digest, signature value and certificate chain all checked out."""
        return self.status == "verified"


UNSIGNED = SignatureCheck("unsigned", "the message carries no XML signature")


@dataclass(frozen=True, slots=True)
class Area:
    """Hold one CAP ``area``: description, polygons, circles and (valueName, value) geocodes."""

    desc: str = ""
    polygons: tuple[str, ...] = ()
    circles: tuple[str, ...] = ()
    geocodes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AlertInfo:
    """Hold one CAP ``info`` block (one language) with its areas."""

    language: str = "en-US"
    categories: tuple[str, ...] = ()
    event: str = ""
    response_types: tuple[str, ...] = ()
    urgency: str = ""
    severity: str = ""
    certainty: str = ""
    event_codes: tuple[tuple[str, str], ...] = ()
    effective: datetime | None = None
    onset: datetime | None = None
    expires: datetime | None = None
    ends: datetime | None = None
    sender_name: str = ""
    headline: str = ""
    description: str = ""
    instruction: str = ""
    web: str = ""
    parameters: tuple[tuple[str, str], ...] = ()
    vtec: tuple[Vtec, ...] = ()
    areas: tuple[Area, ...] = ()

    def parameter(self, name: str) -> tuple[str, ...]:
        """Return every value of the parameter called ``name``, in order."""
        return tuple(value for key, value in self.parameters if key == name)

    def event_code(self, name: str = "SAME") -> str:
        """Return the first event code of scheme ``name`` (SAME by default), or ""."""
        return next((value for key, value in self.event_codes if key == name), "")

    def geocodes(self, *names: str) -> tuple[str, ...]:
        """Return the geocode values of the given schemes over every area, first seen first."""
        wanted = set(names)
        return _unique(
            value for area in self.areas for key, value in area.geocodes if key in wanted
        )

    @property
    def area_desc(self) -> str:
        """Join the areas' descriptions with "; "."""
        return "; ".join(area.desc for area in self.areas if area.desc)

    @property
    def polygons(self) -> tuple[str, ...]:
        """Return the polygons of every area."""
        return tuple(polygon for area in self.areas for polygon in area.polygons)

    @property
    def is_english(self) -> bool:
        """Tell whether the block's language is English (CAP's default is en-US)."""
        return self.language.lower().split("-")[0] == "en"


@dataclass(frozen=True)
class Alert:
    """Hold one alert: the CAP header, the flattened primary ``info`` and every ``info`` block.

    The primary block is the first English one, else the first; ``infos`` keeps all of them.
    Timestamps are timezone-aware UTC. ``effective`` falls back to ``sent`` as CAP defines.
    """

    identifier: str
    sender: str
    sent: datetime
    status: str = "Actual"
    msg_type: str = "Alert"
    scope: str = "Public"
    references: tuple[Reference, ...] = ()
    note: str = ""
    incidents: tuple[str, ...] = ()
    language: str = "en-US"
    event: str = ""
    category: str = ""
    urgency: str = ""
    severity: str = ""
    certainty: str = ""
    event_code: str = ""
    effective: datetime | None = None
    onset: datetime | None = None
    expires: datetime | None = None
    ends: datetime | None = None
    sender_name: str = ""
    headline: str = ""
    description: str = ""
    instruction: str = ""
    response_types: tuple[str, ...] = ()
    area_desc: str = ""
    same_codes: tuple[str, ...] = ()
    ugc_codes: tuple[str, ...] = ()
    vtec: tuple[Vtec, ...] = ()
    eas_org: str = ""
    polygons: tuple[str, ...] = ()
    source: Source = "cap-xml"
    signature: SignatureCheck = UNSIGNED
    infos: tuple[AlertInfo, ...] = field(default=(), repr=False)
    raw: str = field(default="", repr=False)

    @classmethod
    def from_infos(cls, *, infos: Iterable[AlertInfo], **header: Any) -> Alert:
        """Build an alert from header fields and its info blocks, flattening the primary one."""
        blocks = tuple(infos)
        primary = primary_info(blocks)
        if primary is None:
            return cls(**header, infos=blocks)
        flat = _flatten(primary, header.get("sent"))
        if cls is not Alert or not _REQUIRED <= header.keys() <= _HEADER_FIELDS:
            return cls(**header, **flat, infos=blocks)
        # What __init__ sets, set at once (a frozen dataclass's __init__ sets each of its 35
        # fields through object.__setattr__): the header (only header fields, the required ones
        # all given: checked above), the flattened primary block, every other field's default,
        # in field order.
        alert = object.__new__(Alert)
        values = alert.__dict__
        values.update(_TEMPLATE)
        values.update(header)
        values.update(flat)
        values["infos"] = blocks
        return alert

    @property
    def geocodes(self) -> frozenset[str]:
        """Return the SAME and UGC codes together, for set-membership matching."""
        return frozenset(self.same_codes) | frozenset(self.ugc_codes)

    def event_keys(self) -> tuple[EventKey, ...]:
        """Return the VTEC chain keys, taking the year from ``sent`` when a VTEC gives none."""
        return tuple(vtec.event_key(self.sent) for vtec in self.vtec)

    def info_for(self, language: str) -> AlertInfo | None:
        """Return the info block in ``language`` (exact, then by primary subtag), or None."""
        wanted = language.lower()
        for info in self.infos:
            if info.language.lower() == wanted:
                return info
        base = wanted.split("-")[0]
        return next((i for i in self.infos if i.language.lower().split("-")[0] == base), None)


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """Stand in for a feed entry that could not be parsed, so the rest of the feed still is.

    ``position`` is the 0-based index of the entry in its feed; ``link`` is where the full
    message lives when an entry only points at it.
    """

    position: int
    reason: str
    identifier: str = ""
    link: str = ""


def _flatten(primary: AlertInfo, sent: datetime | None) -> dict[str, Any]:
    """The fields of an ``Alert`` taken from its primary info block."""
    same: dict[str, None] = {}
    ugc: dict[str, None] = {}
    descs, polygons = [], []
    for area in primary.areas:  # geocodes("SAME", "FIPS6"), geocodes("UGC"), in one pass
        if area.desc:
            descs.append(area.desc)
        polygons += area.polygons
        for key, value in area.geocodes:
            if key == "SAME" or key == "FIPS6":
                same[value] = None
            elif key == "UGC":
                ugc[value] = None
    return {
        "language": primary.language,
        "event": primary.event,
        "category": primary.categories[0] if primary.categories else "",
        "urgency": primary.urgency,
        "severity": primary.severity,
        "certainty": primary.certainty,
        "event_code": primary.event_code("SAME"),
        "effective": primary.effective or sent,
        "onset": primary.onset,
        "expires": primary.expires,
        "ends": primary.ends,
        "sender_name": primary.sender_name,
        "headline": primary.headline,
        "description": primary.description,
        "instruction": primary.instruction,
        "response_types": primary.response_types,
        "area_desc": "; ".join(descs),
        "same_codes": tuple(same),
        "ugc_codes": tuple(ugc),
        "vtec": primary.vtec,
        "eas_org": next((value for key, value in primary.parameters if key == "EAS-ORG"), ""),
        "polygons": tuple(polygons),
    }


_FIELDS = fields(Alert)
#: Every field of ``Alert`` in order, with its default (None for the required ones).
_TEMPLATE = {f.name: None if f.default is MISSING else f.default for f in _FIELDS}
_REQUIRED = frozenset(f.name for f in _FIELDS if f.default is MISSING)
_FLATTENED = frozenset(
    ("language event category urgency severity certainty event_code effective onset expires ends "
     "sender_name headline description instruction response_types area_desc same_codes ugc_codes "
     "vtec eas_org polygons").split()
)  # fmt: skip
#: The fields ``from_infos`` takes from the caller (the rest come from the info blocks).
_HEADER_FIELDS = frozenset(_TEMPLATE) - _FLATTENED - {"infos"}
assert all(f.default_factory is MISSING for f in _FIELDS)  # _TEMPLATE holds every default


def primary_info(infos: tuple[AlertInfo, ...]) -> AlertInfo | None:
    """Pick the first English info block, else the first one, else None."""
    return next((info for info in infos if info.is_english), infos[0] if infos else None)


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))
