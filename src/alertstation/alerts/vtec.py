"""P-VTEC strings: parse ``/k.aaa.cccc.pp.s.####.yymmddThhnnZ-yymmddThhnnZ/`` into ``Vtec``.

A P-VTEC string names one event of one forecast office and what this product does to it:

- ``k`` product class: ``O`` operational, ``T`` test, ``E`` experimental, ``X`` experimental
  VTEC in an operational product;
- ``aaa`` action: ``NEW`` ``CON`` ``EXT`` ``EXA`` ``EXB`` ``UPG`` ``CAN`` ``EXP`` ``COR`` ``ROU``;
- ``cccc`` the four-letter office, ``pp`` the phenomenon, ``s`` the significance;
- ``####`` the event tracking number (ETN), unique per office, phenomenon and significance
  within a year;
- the event's begin and end as ``yymmddThhnnZ`` in UTC, ``000000T0000Z`` meaning "not given"
  (an event already in progress has no begin; an open-ended one has no end).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

PRODUCT_CLASSES = frozenset("OTEX")
ACTIONS = frozenset({"NEW", "CON", "EXT", "EXA", "EXB", "UPG", "CAN", "EXP", "COR", "ROU"})
#: Actions after which the event is over: nothing in the chain follows them.
TERMINAL_ACTIONS = frozenset({"CAN", "EXP"})
ZERO_TIME = "000000T0000Z"

_PATTERN = re.compile(
    r"/(?P<k>[A-Z])\.(?P<action>[A-Z]{3})\.(?P<office>[A-Z]{4})\.(?P<phen>[A-Z0-9]{2})"
    r"\.(?P<sig>[A-Z])\.(?P<etn>\d{4})\.(?P<begin>\d{6}T\d{4}Z)-(?P<end>\d{6}T\d{4}Z)/",
    re.ASCII,
)


class EventKey(NamedTuple):
    """Identify one VTEC event: office, phenomenon, significance, ETN and the ETN's year."""

    office: str
    phenomenon: str
    significance: str
    etn: int
    year: int


@dataclass(frozen=True, slots=True)
class Vtec:
    """Hold one parsed P-VTEC string; times are aware UTC datetimes or None when not given."""

    product_class: str
    action: str
    office: str
    phenomenon: str
    significance: str
    etn: int
    begin: datetime | None
    end: datetime | None

    @property
    def is_terminal(self) -> bool:
        """Tell whether this action ends the event chain (CAN or EXP)."""
        return self.action in TERMINAL_ACTIONS

    @property
    def is_operational(self) -> bool:
        """Tell whether the product class is operational (``O``)."""
        return self.product_class == "O"

    def event_key(self, sent: datetime | None = None) -> EventKey:
        """Return the chain key; the year comes from begin, else end, else ``sent``.

        Raises ValueError when begin and end are both "not given" and no ``sent`` is passed.
        """
        when = self.begin or self.end or sent
        if when is None:
            raise ValueError(
                f"VTEC {self} gives neither begin nor end time; pass the alert's sent time"
            )
        if when.tzinfo is not None:
            when = when.astimezone(UTC)
        return EventKey(self.office, self.phenomenon, self.significance, self.etn, when.year)

    def __str__(self) -> str:
        """Format the string back in its P-VTEC form."""
        return (
            f"/{self.product_class}.{self.action}.{self.office}.{self.phenomenon}."
            f"{self.significance}.{self.etn:04d}.{_format_time(self.begin)}-"
            f"{_format_time(self.end)}/"
        )


def parse_vtec(text: str) -> Vtec:
    """Parse one P-VTEC string (surrounding whitespace allowed); ValueError when malformed."""
    if not isinstance(text, str):
        raise ValueError(f"VTEC must be a string, not {type(text).__name__}")
    stripped = text.strip()
    match = _PATTERN.fullmatch(stripped)
    if match is None:
        raise ValueError(
            f"malformed P-VTEC string {stripped[:80]!r}: expected "
            "/k.aaa.cccc.pp.s.####.yymmddThhnnZ-yymmddThhnnZ/"
        )
    k, action, office, phenomenon, significance, etn, begin_text, end_text = match.groups()
    if k not in PRODUCT_CLASSES:
        raise ValueError(f"P-VTEC {stripped!r}: unknown product class {k!r}")
    if action not in ACTIONS:
        raise ValueError(f"P-VTEC {stripped!r}: unknown action {action!r}")
    begin = _parse_time(begin_text, stripped)
    end = _parse_time(end_text, stripped)
    if begin is not None and end is not None and end < begin:
        raise ValueError(f"P-VTEC {stripped!r}: end time is before begin time")
    return Vtec(k, action, office, phenomenon, significance, int(etn), begin, end)


def parse_vtec_strings(values: str | Iterable[str]) -> tuple[Vtec, ...]:
    """Parse every P-VTEC string in ``values`` (one string or many, whitespace-separated).

    Blank values are skipped; any malformed one raises ValueError naming it.
    """
    if isinstance(values, str):
        values = (values,)
    found: list[Vtec] = []
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"VTEC must be a string, not {type(value).__name__}")
        found.extend(parse_vtec(token) for token in value.split())
    return tuple(found)


def _parse_time(text: str, whole: str) -> datetime | None:
    if text == ZERO_TIME:
        return None
    try:
        return _time_of(text)
    except ValueError as ex:
        raise ValueError(f"P-VTEC {whole!r}: impossible time {text!r} ({ex})") from None


@functools.lru_cache(maxsize=4096)
def _time_of(text: str) -> datetime:
    """The time of a ``yymmddThhnnZ`` text (the outer pattern guarantees its ASCII digits).

    Kept per text: the strings of one event repeat the same begin and end across its products.
    """
    return datetime(
        2000 + int(text[0:2]), int(text[2:4]), int(text[4:6]), int(text[7:9]), int(text[9:11]),
        tzinfo=UTC,
    )  # fmt: skip


def _format_time(value: datetime | None) -> str:
    if value is None:
        return ZERO_TIME
    return value.astimezone(UTC).strftime("%y%m%dT%H%MZ")
