"""Explain why an alert is in the broadcast area: the reason and the code pairs that matched.

``relation`` names how one configured code relates to one alert code under the rule of
docs/matching.md (the same rule the geomatch kernel applies, written on single codes);
``explain_match`` is a pure function from the configured codes, the alert's codes in order, the
codes still in force and the polygon result to the ``match`` object the API and the alert page
show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from alertstation.alerts.matching import (
    FIPS_STATE,
    INVALID_ID,
    STATE_FIPS,
    UGC_BASE,
    code_id_or_invalid,
    decode_id,
)

CODE: Final[str] = "code"
COUNTY: Final[str] = "county"
COUNTY_PART: Final[str] = "county part"
STATE: Final[str] = "state"
NATION: Final[str] = "nation"
POLYGON: Final[str] = "polygon"
# The reasons in the order they are preferred: the first that applies is the alert's reason.
REASONS: Final[tuple[str, ...]] = (CODE, COUNTY, COUNTY_PART, STATE, NATION, POLYGON)


@dataclass(frozen=True)
class Match:
    """Why an alert is (or is not) in the broadcast area."""

    in_area: bool
    reason: str | None
    pairs: tuple[tuple[str, str], ...]
    remaining_codes: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form: ``{in_area, reason, pairs, remaining_codes}``."""
        return {
            "in_area": self.in_area,
            "reason": self.reason,
            "pairs": [list(pair) for pair in self.pairs],
            "remaining_codes": list(self.remaining_codes),
        }


def _state_of(code_id: int) -> int:
    """Return the state FIPS number of a code id, 0 when it has none."""
    if code_id >= UGC_BASE:
        return STATE_FIPS.get(decode_id(code_id)[:2], 0)
    return code_id // 1000 % 100


def ugc_county_same(code_id: int) -> int | None:
    """Return the SAME whole-county id ``0FFNNN`` of a UGC county id, None for other codes."""
    if code_id < UGC_BASE or (code_id - UGC_BASE) // 1000 % 2 != 1 or code_id % 1000 == 0:
        return None
    state = _state_of(code_id)
    return state * 1000 + code_id % 1000 if state else None


def same_county_ugc(code: str) -> str | None:
    """Return the UGC county code ``SSCNNN`` of a SAME county code ``PFFNNN``, None if none."""
    code_id = code_id_or_invalid(code)
    if not 0 < code_id < UGC_BASE or code_id % 1000 == 0:
        return None
    postal = FIPS_STATE.get(code_id // 1000 % 100)
    return f"{postal}C{code_id % 1000:03d}" if postal else None


def _one_way(whole: int, other: int) -> str | None:
    """Return the relation in which ``whole`` is the wider code, None when there is none."""
    county = ugc_county_same(whole)
    if county is not None and other < UGC_BASE and other % 100_000 == county:
        return COUNTY if other == county else COUNTY_PART
    if (
        whole < UGC_BASE
        and other < UGC_BASE
        and whole // 100_000 == 0
        and whole % 1000 != 0
        and other % 100_000 == whole
    ):
        return COUNTY_PART  # rule 4: a whole county and one of its parts
    if whole < UGC_BASE and whole // 100_000 == 0 and whole % 1000 == 0:
        state = whole // 1000
        if state and _state_of(other) == state:
            return STATE  # rule 3: a whole state and a code of that state
    return None


@lru_cache(maxsize=65_536)
def relation(configured: str, alert_code: str) -> str | None:
    """Return how two codes match (a reason of ``REASONS`` but polygon), None when they don't.

    The rule is symmetric; invalid codes match nothing.
    """
    a, b = code_id_or_invalid(configured), code_id_or_invalid(alert_code)
    if INVALID_ID in (a, b):
        return None
    if a == b:
        return CODE
    found = [r for r in (_one_way(a, b), _one_way(b, a)) if r is not None]
    if found:
        return min(found, key=REASONS.index)
    if 0 in (a, b):
        return NATION
    return None


def explain_match(
    configured: Iterable[str],
    alert_codes: Sequence[str],
    remaining_codes: Sequence[str],
    polygon_hit: bool,
) -> Match:
    """Return the ``match`` object of an alert.

    ``configured`` are the broadcast area codes, ``alert_codes`` the alert's codes in its order,
    ``remaining_codes`` the codes still in force (only they can match) and ``polygon_hit``
    whether a geometry match counts (polygon matching on and a shape touching the boundary).
    ``pairs`` lists every ``[configured, alert_code]`` that matches, in the alert's code order
    (then the configured order); ``reason`` is the first of ``REASONS`` that applies, None when
    the alert is not in the area.
    """
    area = _Area.of(tuple(configured))
    in_force = {code_id_or_invalid(code) for code in remaining_codes} - {INVALID_ID}
    pairs: list[tuple[str, str]] = []
    kinds: set[str] = set()
    for code in dict.fromkeys(alert_codes):
        code_id = code_id_or_invalid(code)
        if code_id not in in_force:
            continue
        for mine in area.candidates_of(code_id):
            kind = relation(mine, code)
            if kind is not None:
                pairs.append((mine, code))
                kinds.add(kind)
    if polygon_hit:
        kinds.add(POLYGON)
    reason = min(kinds, key=REASONS.index) if kinds else None
    return Match(
        in_area=reason is not None,
        reason=reason,
        pairs=tuple(pairs),
        remaining_codes=tuple(remaining_codes),
    )


_SEEN_LIMIT = 50_000


class _Area:
    """The configured codes indexed so that an alert code meets only the codes it may match."""

    def __init__(self, configured: tuple[str, ...]) -> None:
        ids = (code_id_or_invalid(code) for code in configured)
        self.order = {i: n for n, i in enumerate(dict.fromkeys(ids)) if i != INVALID_ID}
        self.by_state: dict[int, list[int]] = {}
        self.seen: dict[int, list[str]] = {}
        for code_id in self.order:
            self.by_state.setdefault(_state_of(code_id), []).append(code_id)

    @staticmethod
    @lru_cache(maxsize=8)
    def of(configured: tuple[str, ...]) -> _Area:
        """Return the (cached) index of a configuration."""
        return _Area(configured)

    def candidates(self, code_id: int) -> list[str]:
        """Return the configured codes that may relate to an alert code, in configured order."""
        if code_id == 0:
            found: set[int] = set(self.order)  # the nation meets every configured code
        else:
            state = _state_of(code_id)
            found = {code_id, 0, state * 1000}
            if code_id < UGC_BASE and code_id % 1000 == 0 and code_id // 100_000 == 0:
                found.update(self.by_state.get(state, ()))  # a whole state meets its codes
            county = ugc_county_same(code_id) if code_id >= UGC_BASE else code_id % 100_000
            if county is not None and county % 1000:
                found.update(p * 100_000 + county for p in range(10))
                postal = FIPS_STATE.get(county // 1000)
                if postal is not None:
                    found.add(code_id_or_invalid(f"{postal}C{county % 1000:03d}"))
        return [decode_id(i) for i in sorted(found & self.order.keys(), key=self.order.__getitem__)]

    def candidates_of(self, code_id: int) -> list[str]:
        """Return ``candidates(code_id)``, remembered for the next alert that names the code."""
        found = self.seen.get(code_id)
        if found is None:
            if len(self.seen) >= _SEEN_LIMIT:
                self.seen.clear()  # keep the memory of a long-lived configuration bounded
            found = self.seen[code_id] = self.candidates(code_id)
        return found
