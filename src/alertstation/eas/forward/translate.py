"""Translate a stored CAP alert into the parts of a SAME message (pure functions).

* **Locations**: the alert's SAME codes (plus its UGC county codes ``SSCNNN`` read as
  ``0SSNNN``) limited to the broadcast area. A code the area covers only in part is narrowed to
  the configured codes it holds: an alert for the whole state ``039000`` in a station configured
  with ``039049`` airs ``039049``; an alert for the whole county ``039049`` in a station
  configured with ``539049`` airs ``539049``. UGC zones in the area cannot name counties (the
  zone catalog has no zone-to-county table), so they contribute the alert's SAME codes in the
  states of the alert's zones that the area holds. At most 31 codes: those from configured SAME
  codes first, then those from zones, each group in code order; the rest are dropped.
* **Purge time**: from the issue minute to the alert's expiry, rounded up to a legal step
  (15 minutes up to an hour, 30 minutes beyond) and capped at 99 h 30 min; one hour when the
  alert gives no expiry.
* **Voice text**: headline, then description, tidied for speech and trimmed to
  ``MAX_VOICE_CHARS`` at a sentence or word boundary.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from alertstation.alerts.matching import STATE_FIPS, GeocodeMatcher
from alertstation.same import MAX_LOCATIONS, round_up_purge

ORIGINATOR: Final[str] = "WXR"
NATION: Final[str] = "000000"
DEFAULT_PURGE: Final[timedelta] = timedelta(hours=1)
#: About 75 s of speech at espeak-ng's 160 words a minute: well inside the 120 s limit.
MAX_VOICE_CHARS: Final[int] = 1200

_BULLET = re.compile(r"(^|\s)\*\s+")
_ELLIPSIS = re.compile(r"\s*\.{2,}\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Locations:
    """The location codes chosen for a header and those left out past the 31-code limit."""

    codes: tuple[str, ...]
    dropped: tuple[str, ...] = ()
    from_zones: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """Return a short remark on how the codes were chosen ("" when nothing to say)."""
        parts = []
        if self.from_zones:
            parts.append(f"{len(self.from_zones)} code(s) chosen by the state of UGC zones")
        if self.dropped:
            total = len(self.codes) + len(self.dropped)
            parts.append(f"{len(self.codes)} of {total} location codes sent (31 at most)")
        return "; ".join(parts)


def is_same(code: str) -> bool:
    """Tell whether a normalised code is a SAME code (six digits)."""
    return len(code) == 6 and code.isdigit()


def _rank(code: str) -> int:
    """Return how wide a SAME code is: 0 nation, 1 state, 2 whole county, 3 part of a county."""
    if code == NATION:
        return 0
    if code[0] == "0" and code[3:] == "000" and code[1:3] != "00":
        return 1
    return 2 if code[0] == "0" else 3


def covers(wide: str, narrow: str) -> bool:
    """Tell whether SAME code ``wide`` names all of the area ``narrow`` names.

    Two SAME codes match (``alertstation.alerts.matching``) exactly when one covers the other.
    """
    if wide == narrow:
        return True
    rank = _rank(wide)
    if rank == 0:
        return True
    if rank == 1:
        return narrow[1:3] == wide[1:3]
    if rank == 2:
        return narrow[1:] == wide[1:]
    return False


def ugc_county_as_same(code: str) -> str | None:
    """Return the SAME code of a UGC county code (``OHC049`` → ``039049``), else None."""
    if len(code) == 6 and code[2] == "C" and code[3:].isdigit() and code[:2] in STATE_FIPS:
        return f"0{STATE_FIPS[code[:2]]:02d}{code[3:]}"
    return None


def _minimal(codes: Iterable[str]) -> set[str]:
    """Drop every code another code of the set covers (a part whose whole county is there)."""
    found = set(codes)
    return {c for c in found if not any(o != c and covers(o, c) for o in found)}


def _from_same_area(alert_same: Sequence[str], area_same: Sequence[str]) -> set[str]:
    """Return the alert's SAME codes in the area, each narrowed to what the area holds."""
    if not area_same:
        return set()
    matcher = GeocodeMatcher(area_same)
    by_state: dict[str, list[str]] = defaultdict(list)
    for code in area_same:
        by_state[code[1:3]].append(code)
    nation = [NATION] if NATION in area_same else []
    chosen: set[str] = set()
    for code in alert_same:
        if not matcher.matches([code]):
            continue
        related = list(area_same) if code == NATION else by_state[code[1:3]] + nation
        for configured in related:
            if covers(code, configured):
                chosen.add(configured)  # the area holds less than the alert names
            elif covers(configured, code):
                chosen.add(code)
    return chosen


def _from_zones(
    alert_same: Sequence[str], alert_ugc: Sequence[str], area_ugc: Sequence[str]
) -> set[str]:
    """Return the alert's SAME codes in the states of the area's UGC zones that it concerns.

    A county code counts when the alert names a zone of its state that the area holds; a
    whole-state code when the area holds a zone of that state; the nation becomes the whole
    states the area's zones lie in. Zones of marine areas (no state) contribute nothing.
    """
    if not area_ugc:
        return set()
    matcher = GeocodeMatcher(area_ugc)
    area_states = {STATE_FIPS[code[:2]] for code in area_ugc if code[:2] in STATE_FIPS}
    alert_states = {
        STATE_FIPS[code[:2]]
        for code in alert_ugc
        if code[:2] in STATE_FIPS and matcher.matches([code])
    }
    chosen: set[str] = set()
    for code in alert_same:
        state = int(code[1:3])
        if code == NATION:
            chosen.update(f"0{area_state:02d}000" for area_state in area_states)
        elif (_rank(code) == 1 and state in area_states) or state in alert_states:
            chosen.add(code)
    return chosen


def area_locations(alert_codes: Iterable[str], area_codes: Iterable[str]) -> Locations:
    """Choose the header's location codes: the alert's codes limited to the broadcast area.

    ``alert_codes`` and ``area_codes`` are normalised SAME and UGC codes, mixed (as stored and
    as configured). The result may be empty: the alert names no SAME place in the area.
    """
    alert = list(dict.fromkeys(alert_codes))
    area = list(dict.fromkeys(area_codes))
    alert_ugc = [code for code in alert if not is_same(code)]
    translated = [ugc_county_as_same(code) for code in alert_ugc]
    alert_same = list(
        dict.fromkeys([c for c in alert if is_same(c)] + [c for c in translated if c])
    )
    # A configured UGC county is its SAME county; only the area's zones go by state.
    area_counties = {code: ugc_county_as_same(code) for code in area if not is_same(code)}
    area_same = [c for c in area if is_same(c)] + [c for c in area_counties.values() if c]
    exact = _from_same_area(alert_same, list(dict.fromkeys(area_same)))
    zoned = _from_zones(alert_same, alert_ugc, [c for c, same in area_counties.items() if not same])
    kept = _minimal(exact | zoned)
    ordered = sorted(c for c in kept if c in exact) + sorted(c for c in kept if c not in exact)
    return Locations(
        codes=tuple(ordered[:MAX_LOCATIONS]),
        dropped=tuple(ordered[MAX_LOCATIONS:]),
        from_zones=tuple(c for c in ordered[:MAX_LOCATIONS] if c not in exact),
    )


def issue_minute(now: datetime) -> datetime:
    """Return ``now`` cut to the minute: the issue time a header can say."""
    return now.replace(second=0, microsecond=0)


def purge_for(expires: datetime | None, issued: datetime) -> timedelta:
    """Return the purge time from ``issued`` to ``expires``, rounded up to a legal step.

    15-minute steps up to one hour, 30-minute steps beyond, at most 99 h 30 min; one hour when
    ``expires`` is None. An expiry at or before ``issued`` is a ValueError.
    """
    if expires is None:
        return DEFAULT_PURGE
    if expires <= issued:
        raise ValueError(f"purge time: the alert expired at {expires.isoformat()}")
    return round_up_purge(expires - issued)


def _speakable(text: str) -> str:
    text = _BULLET.sub(r"\1", text)
    text = _ELLIPSIS.sub(", ", text)
    return _SPACE.sub(" ", text).strip(" ,")


def voice_text(headline: str, description: str, limit: int = MAX_VOICE_CHARS) -> str:
    """Return the text to speak: headline, then description, trimmed to ``limit`` characters.

    NWS layout is tidied for speech (``HAZARD...60 mph`` reads ``HAZARD, 60 mph``; bullets and
    line breaks go). A long text is cut at the last sentence end in its second half, else at
    the last space, and closed with a full stop.
    """
    parts: list[str] = []
    for part in (headline, description):
        cleaned = _speakable(part or "")
        if cleaned and cleaned not in parts:
            parts.append(cleaned if cleaned[-1] in ".!?" else cleaned + ".")
    text = " ".join(parts)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= limit // 2:
        return cut[: end + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:") + "."
