"""Forwarding rules: which message airs on its own, which waits for approval, which is held.

A pure module (no database): the rule book is an ordered list of :class:`Rule` and a default
:class:`Mode`. A rule matches a :class:`Subject` (one message about to be forwarded) when each of
its four lists is empty or holds the message's value: event codes, originators, sources and
area codes. The first matching rule decides; when none matches, the default does. A mode is
``auto`` (air at once), ``manual`` (wait for an operator) or ``hold`` N minutes (air after N
minutes unless an operator holds or rejects it first).

A source is ``audio:<id>`` (an audio source), ``poll:<id>`` (a CAP poll source), ``poll`` (any
poll source) or ``imported`` (a file upload or the command line). A CAP alert's source is the
poll source that fetched it (stored with the alert); an alert stored before that was recorded
reads as ``poll``, which a rule's ``poll`` matches but no ``poll:<id>`` does.

National messages (EAN, NPT) are decided before any rule: they always air at once
(:data:`NATIONAL_EVENTS`, 47 CFR 11.54).

A Required Monthly Test for the station's area must be relayed within 60 minutes (47 CFR
11.61). When no rule matches one, the default that decides it is a hold that ends within that
deadline: ``hold`` :data:`RMT_HOLD_MINUTES` minutes (an operator may still hold or reject it
meanwhile), unless the book's default airs it sooner (``auto``, or a shorter hold).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from alertstation.errors import Invalid
from alertstation.same import NATIONAL_EVENTS

AUTO: Final[str] = "auto"
MANUAL: Final[str] = "manual"
HOLD: Final[str] = "hold"
MODES: Final[tuple[str, ...]] = (AUTO, MANUAL, HOLD)
MIN_HOLD: Final[int] = 1
MAX_HOLD: Final[int] = 120
MAX_RULES: Final[int] = 100
MAX_ITEMS: Final[int] = 200
IMPORTED: Final[str] = "imported"
#: Any poll source (a CAP alert whose poll source is not known reads as this).
POLL: Final[str] = "poll"
NATIONAL_RULE: Final[str] = "national"
DEFAULT_RULE: Final[str] = "default"
#: What decides an RMT no rule matched: the default, bounded by the relay deadline.
RMT_DEFAULT_RULE: Final[str] = "default (RMT deadline)"
RMT_EVENT: Final[str] = "RMT"
#: The longest hold an RMT gets by default: it airs well inside its 60-minute deadline, and
#: before the 45-minute unaired alarm.
RMT_HOLD_MINUTES: Final[int] = 15

_EVENT = re.compile(r"^[A-Z0-9]{3}$")
_ORIGINATOR = re.compile(r"^[A-Z]{3}$")
_AREA = re.compile(r"^\d{6}$")
_SOURCE = re.compile(r"^(poll|audio):[1-9]\d{0,9}$")
_LISTS: Final[tuple[str, ...]] = ("events", "originators", "sources", "areas")


@dataclass(frozen=True)
class Mode:
    """How a matched message airs: ``auto``, ``manual``, or ``hold`` for ``minutes``."""

    mode: str = MANUAL
    minutes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form: ``{"mode": ...}``, with ``hold_minutes`` for a hold."""
        data: dict[str, Any] = {"mode": self.mode}
        if self.mode == HOLD:
            data["hold_minutes"] = self.minutes
        return data


@dataclass(frozen=True)
class Rule:
    """One rule: four lists to match (empty = any) and the mode of what matches."""

    events: tuple[str, ...] = ()
    originators: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    mode: Mode = Mode()

    def matches(self, subject: Subject) -> bool:
        """Tell whether every non-empty list of the rule holds the subject's value."""
        return (
            (not self.events or subject.event in self.events)
            and (not self.originators or subject.originator in self.originators)
            and (not self.sources or any(_source_covers(s, subject.source) for s in self.sources))
            and (not self.areas or any(_covers(a, c) for a in self.areas for c in subject.areas))
        )

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form of the rule."""
        return {
            "events": list(self.events),
            "originators": list(self.originators),
            "sources": list(self.sources),
            "areas": list(self.areas),
            **self.mode.as_dict(),
        }


@dataclass(frozen=True)
class RuleBook:
    """The ordered rules and the default mode (``manual`` on a new station)."""

    rules: tuple[Rule, ...] = ()
    default: Mode = Mode()

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form: ``{"rules": [...], "default": {"mode": ...}}``."""
        return {"rules": [rule.as_dict() for rule in self.rules], "default": self.default.as_dict()}


@dataclass(frozen=True)
class Subject:
    """What the rules look at in a message: event, originator, source and area codes."""

    event: str
    originator: str
    source: str
    areas: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """The mode a message takes and what decided it: ``rule N`` (1-based), default, national."""

    mode: Mode
    rule: str


def decide(book: RuleBook, subject: Subject) -> Decision:
    """Return the mode of a message: national first, then the first matching rule, else default."""
    if subject.event in NATIONAL_EVENTS:
        return Decision(Mode(AUTO), NATIONAL_RULE)
    for number, rule in enumerate(book.rules, start=1):
        if rule.matches(subject):
            return Decision(rule.mode, f"rule {number}")
    if subject.event == RMT_EVENT:
        return Decision(rmt_default(book.default), RMT_DEFAULT_RULE)
    return Decision(book.default, DEFAULT_RULE)


def _source_covers(rule_source: str, source: str) -> bool:
    """Tell whether a rule's source covers a message's: equal, or ``poll`` for any poll source."""
    return rule_source == source or (rule_source == POLL and source.startswith(f"{POLL}:"))


def rmt_default(default: Mode) -> Mode:
    """Return the default mode of an RMT: a hold ending within its relay deadline (11.61).

    ``auto`` and a hold of at most :data:`RMT_HOLD_MINUTES` stay; ``manual`` or a longer hold
    become a hold of :data:`RMT_HOLD_MINUTES`.
    """
    if default.mode == AUTO:
        return default
    if default.mode == HOLD and default.minutes is not None and default.minutes <= RMT_HOLD_MINUTES:
        return default
    return Mode(HOLD, RMT_HOLD_MINUTES)


def _covers(rule_code: str, code: str) -> bool:
    """Tell whether a rule's area code covers a message's location code (SAME PSSCCC).

    Equal codes match; a part digit ``0`` on either side means the whole county; a county
    ``000`` on the message's side means its whole state, and ``000000`` the whole country.
    """
    if code == "000000" or rule_code == code:
        return True
    if rule_code[1:3] != code[1:3]:
        return False
    if code[3:] == "000":
        return True
    return rule_code[3:] == code[3:] and "0" in (rule_code[0], code[0])


def read_book(body: Any) -> RuleBook:
    """Check a rule book body (``{"rules": [...], "default": {...}}``); 422 naming the field."""
    if not isinstance(body, dict):
        raise Invalid("the body must be a JSON object", field="rules")
    unknown = sorted(set(body) - {"rules", "default"})
    if unknown:
        raise Invalid(f"unknown field {unknown[0]}", field=unknown[0])
    rules = body.get("rules")
    if not isinstance(rules, list):
        raise Invalid("rules must be a list", field="rules")
    if len(rules) > MAX_RULES:
        raise Invalid(f"at most {MAX_RULES} rules", field="rules")
    default = read_mode(body.get("default", {"mode": MANUAL}), "default")
    return RuleBook(tuple(_rule(item, f"rules[{i}]") for i, item in enumerate(rules)), default)


def read_mode(value: Any, name: str) -> Mode:
    """Check ``{"mode": ..., "hold_minutes": N}``; a hold needs N within 1-120."""
    if not isinstance(value, dict):
        raise Invalid(f"{name} must be an object with a mode", field=name)
    mode = value.get("mode")
    if mode not in MODES:
        raise Invalid(f"{name}.mode must be one of {', '.join(MODES)}", field=f"{name}.mode")
    minutes = value.get("hold_minutes")
    if mode != HOLD:
        if minutes is not None:
            raise Invalid(f"{name}.hold_minutes is for mode hold only", field=f"{name}.mode")
        return Mode(mode)
    if isinstance(minutes, bool) or not isinstance(minutes, int):
        raise Invalid(f"{name}.hold_minutes must be a whole number", field=f"{name}.hold_minutes")
    if not MIN_HOLD <= minutes <= MAX_HOLD:
        raise Invalid(
            f"{name}.hold_minutes must be within {MIN_HOLD}-{MAX_HOLD}, got {minutes}",
            field=f"{name}.hold_minutes",
        )
    return Mode(HOLD, minutes)


def _rule(item: Any, name: str) -> Rule:
    if not isinstance(item, dict):
        raise Invalid(f"{name} must be an object", field=name)
    unknown = sorted(set(item) - {*_LISTS, "mode", "hold_minutes"})
    if unknown:
        raise Invalid(f"{name}: unknown field {unknown[0]}", field=f"{name}.{unknown[0]}")
    mode = read_mode({k: item[k] for k in ("mode", "hold_minutes") if k in item}, name)
    return Rule(
        events=_codes(item.get("events", []), f"{name}.events", _EVENT, "three letters or digits"),
        originators=_codes(
            item.get("originators", []), f"{name}.originators", _ORIGINATOR, "three letters"
        ),
        sources=_sources(item.get("sources", []), f"{name}.sources"),
        areas=_codes(item.get("areas", []), f"{name}.areas", _AREA, "six digits (PSSCCC)"),
        mode=mode,
    )


def _list(value: Any, name: str) -> Sequence[Any]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid(f"{name} must be a list of strings", field=name)
    if len(value) > MAX_ITEMS:
        raise Invalid(f"{name}: at most {MAX_ITEMS} entries", field=name)
    return value


def _codes(value: Any, name: str, pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    codes = [v.strip().upper() for v in _list(value, name)]
    for code in codes:
        if not pattern.match(code):
            raise Invalid(f"{name}: {code!r} is not {what}", field=name)
    return tuple(dict.fromkeys(codes))


def _sources(value: Any, name: str) -> tuple[str, ...]:
    sources = [v.strip().lower() for v in _list(value, name)]
    for source in sources:
        if source not in (IMPORTED, POLL) and not _SOURCE.match(source):
            raise Invalid(
                f"{name}: {source!r} is not poll, poll:<id>, audio:<id> or {IMPORTED}", field=name
            )
    return tuple(dict.fromkeys(sources))
