"""The codes an operator may put in an alert area, and what each one names.

One rule serves the location and filtering saves and ``GET /api/alerts/area/check``: a token is
read upper-case without whitespace or hyphens (``VA057`` is ``VAZ057``), and it is valid when it
is a UGC zone code ``SSZNNN``, a UGC county code ``SSCNNN`` or a SAME code ``PSSCCC`` (six
digits, P 0–9). ``/api/zones/validate`` keeps its zone-only rule
(``alertstation.zones.validate``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from alertstation.alerts.explain import ugc_county_same
from alertstation.alerts.matching import decode_id, encode_code
from alertstation.zones.fips import describe_same_code
from alertstation.zones.validate import normalise_zone_code

ZONE = re.compile(r"^[A-Z]{2}Z\d{3}$")
UGC_COUNTY = re.compile(r"^[A-Z]{2}C\d{3}$")
SAME = re.compile(r"^\d{6}$")
SEPARATORS = re.compile(r"[\s,]+")
# How the help, the errors and the check name the forms a code may take.
FORMS = (
    "UGC zone codes such as VAZ057 (VA057 is read as VAZ057), UGC county codes such as OHC137 "
    "or SAME codes PSSCCC such as 039137 (P 0-9)"
)


def normalise_area_code(token: str) -> str:
    """Return a token upper-cased, without whitespace and hyphens, ``ST###`` as ``STZ###``."""
    return normalise_zone_code(token)


def kind_of(code: str) -> str | None:
    """Return ``zone``, ``county`` (UGC or SAME whole county or part) or None when invalid."""
    if ZONE.match(code):
        return "zone"
    if UGC_COUNTY.match(code) or SAME.match(code):
        return "county"
    return None


@dataclass(frozen=True)
class AreaCodes:
    """The valid codes of an input (normalised, first-seen order) and its invalid tokens."""

    valid: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)

    @property
    def zones(self) -> list[str]:
        """Return the UGC zone codes among the valid codes."""
        return [code for code in self.valid if ZONE.match(code)]

    @property
    def counties(self) -> list[str]:
        """Return the county codes (UGC ``SSCNNN`` and SAME ``PSSCCC``) among the valid codes."""
        return [code for code in self.valid if kind_of(code) == "county"]


def read_area_codes(tokens: str | Iterable[str]) -> AreaCodes:
    """Split text (on commas and whitespace) or tokens into valid codes and invalid tokens."""
    items = SEPARATORS.split(tokens) if isinstance(tokens, str) else tokens
    valid: dict[str, None] = {}
    invalid: dict[str, None] = {}
    for token in items:
        code = normalise_area_code(str(token))
        if not code:
            continue
        if kind_of(code) is not None:
            valid.setdefault(code, None)
        else:
            invalid.setdefault(str(token).strip(), None)
    return AreaCodes(list(valid), list(invalid))


def describe_area_code(catalog: Any, code: str) -> str | None:
    """Name a valid code from the catalog (``Putnam, OH``), None when the catalog lacks it."""
    if SAME.match(code):
        return describe_same_code(catalog, code)
    if UGC_COUNTY.match(code):
        county = ugc_county_same(encode_code(code))
        return describe_same_code(catalog, decode_id(county)) if county is not None else None
    return catalog.name_for(code)


def check_area(catalog: Any, tokens: str | Iterable[str]) -> dict[str, Any]:
    """Return the check of an area input: valid, invalid, known (with names) and unknown codes.

    ``counties`` and ``zones`` count the valid codes of each kind; ``zones_without_counties``
    is true when the area has zones but no county, so county-based warnings cannot match.
    """
    codes = read_area_codes(tokens)
    known: list[dict[str, str]] = []
    unknown: list[str] = []
    for code in codes.valid:
        name = describe_area_code(catalog, code)
        if name is None:
            unknown.append(code)
        else:
            known.append({"code": code, "name": name})
    return {
        "valid": codes.valid,
        "invalid": codes.invalid,
        "known": known,
        "unknown": unknown,
        "counties": len(codes.counties),
        "zones": len(codes.zones),
        "zones_without_counties": bool(codes.zones) and not codes.counties,
    }


_ZONE_KINDS = {
    "public": "a forecast zone",
    "fire": "a fire-weather zone",
    "marine": "a marine zone",
}
_REASON_WORDS = {
    "code": "the same code",
    "county": "the same county",
    "county part": "a county and a part of it",
    "state": "a whole state and a code of that state",
    "nation": "the whole nation",
}
SHOWN_CODES = 8


def kind_in_words(catalog: Any, code: str) -> str:
    """Say what a code names: ``a forecast zone``, ``a county``, ``a whole state``..."""
    if code == "000000":
        return "the whole nation"
    if SAME.match(code):
        if code.endswith("000") and code[0] == "0":
            return "a whole state"
        return "a county" if code[0] == "0" else "a county part"
    if UGC_COUNTY.match(code):
        return "a county"
    record = catalog.lookup(code)
    return _ZONE_KINDS.get(record.zone_type, "a zone") if record is not None else "a zone"


def _named(catalog: Any, codes: list[str]) -> str:
    """List codes with their names: ``039137 Putnam, OH, OHC137 Putnam, OH and 3 more``."""
    parts = []
    for code in codes[:SHOWN_CODES]:
        name = describe_area_code(catalog, code)
        parts.append(f"{code} {name}" if name else code)
    more = len(codes) - SHOWN_CODES
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def explain_in_words(
    catalog: Any, configured: Iterable[str], codes: list[str], match: dict[str, Any], noun: str
) -> str:
    """Say why an alert is or is not in the broadcast area, naming the codes involved.

    ``match`` is the alert's ``match`` object and ``noun`` what to call it (``warning``).
    """
    area = [code.strip().upper() for code in configured]
    if match["in_area"]:
        if match["reason"] == "polygon":
            return (
                "In the broadcast area by geometry: a drawn area of this "
                f"{noun} touches the station boundary."
            )
        mine, theirs = match["pairs"][0]
        words = _REASON_WORDS.get(match["reason"], "matching codes")
        return (
            f"In the broadcast area: your area has {mine} ({kind_in_words(catalog, mine)}), "
            f"and this {noun} names {_named(catalog, [theirs])} ({words})."
        )
    if not area:
        return f"Not in the broadcast area: no broadcast area is set, so no {noun} is in it."
    remaining = list(match["remaining_codes"])
    if not remaining:
        return f"Not in the broadcast area: no code of this {noun} is still in force."
    yours = ", ".join(f"{code} ({kind_in_words(catalog, code)})" for code in area[:SHOWN_CODES])
    if len(area) > SHOWN_CODES:
        yours += f" and {len(area) - SHOWN_CODES} more"
    read = read_area_codes(remaining)
    counties = [code for code in read.counties if not _same_listed(code, read.counties)]
    named = []
    if counties:
        named.append(f"counties: {_named(catalog, counties)}")
    zones = [code for code in read.valid if code not in read.counties]
    if zones:
        named.append(f"zones: {_named(catalog, zones)}")
    return f"Not in the broadcast area: your area has {yours}; this {noun} names " + (
        "; and ".join(named) if named else "no code"
    )


def _same_listed(code: str, codes: list[str]) -> bool:
    """Return whether ``code`` is a UGC county whose SAME whole county is also in ``codes``."""
    if not UGC_COUNTY.match(code):
        return False
    county = ugc_county_same(encode_code(code))
    return county is not None and decode_id(county) in codes
