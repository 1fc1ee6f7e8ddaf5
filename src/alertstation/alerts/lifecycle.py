"""Decide each stored alert's state, and the state of each of its codes, from VTEC and CAP.

The rules (docs/alerts-lifecycle.md, after NWS Directives 10-1703 and 10-1701) are pure
functions of the facts the store reads: a VTEC event's state is kept per UGC code, the products
that list a code are taken in ``sent`` order, and the segments of one product (same event, same
``sent``) never act on each other. The state of every message a new one touches is recomputed
from scratch, so the outcome never depends on the order messages arrived in.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from alertstation.alerts.matching import FIPS_STATE
from alertstation.alerts.model import Alert
from alertstation.alerts.vtec import EventKey
from alertstation.same import MARINE_AREAS

ACTIVE = "active"
EXPIRED = "expired"
CANCELLED = "cancelled"
SUPERSEDED = "superseded"
STATES = (ACTIVE, EXPIRED, CANCELLED, SUPERSEDED)

#: VTEC actions that end the event for the codes of their own segment.
ENDING_ACTIONS = frozenset({"CAN", "EXP", "UPG"})
#: VTEC actions that add the codes of their segment to the event (and are forwarded).
ADDING_ACTIONS = frozenset({"NEW", "EXA", "EXB"})
#: VTEC actions that continue the codes their segment lists (COR never changes the area).
CONTINUING_ACTIONS = frozenset({"CON", "EXT", "COR"})
#: VTEC actions whose message is put on the forward queue (new event or new area).
FORWARD_ACTIONS = ADDING_ACTIONS
#: The action that starts, continues and ends nothing.
ROUTINE = "ROU"
#: What an ending action makes of the codes it ends.
_ENDING_STATE = {"CAN": CANCELLED, "EXP": EXPIRED, "UPG": SUPERSEDED}
#: Which ended state names a message (or a code over several events) first.
_PRECEDENCE = {SUPERSEDED: 0, CANCELLED: 1, EXPIRED: 2}
#: The code a segment without UGC codes is kept under (never stored).
NO_CODE = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Hold a decided state and, for a cancellation, when it took effect."""

    state: str
    cancelled_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class CodeState:
    """How one code of one message stands: active, or ended when, how and by which message."""

    state: str
    ended_at: datetime | None = None
    ended_by: int | None = None


LIVE = CodeState(ACTIVE)


@dataclass(frozen=True, slots=True)
class Member:
    """One message's part in one VTEC event: its action and its segment's UGC codes.

    ``name`` (the CAP identifier) breaks ties between messages of one product, so that which
    message is named as having ended a code never depends on arrival order.
    """

    alert_id: int
    name: str
    sent: datetime
    action: str
    codes: tuple[str, ...]


def event_code_states(members: Iterable[Member]) -> dict[int, dict[str, CodeState]]:
    """Return, for every member of one VTEC event, the state of each of its codes in the event.

    Per code, the products that list it are taken in ``sent`` order; messages with the same
    ``sent`` are segments of one product and never supersede, continue or end each other.
    NEW, EXA and EXB add the code; CON, EXT and COR continue it (a continuation of a code that
    an earlier product ended revives nothing); CAN, EXP and UPG end it at their ``sent``. A
    live code of an earlier product is superseded by the next product that adds or continues
    it, or ended by the next product that ends it. ROU members take no part.
    """
    by_code: dict[str, dict[datetime, list[Member]]] = {}
    for member in members:
        if member.action == ROUTINE:
            continue
        for code in member.codes or (NO_CODE,):
            by_code.setdefault(code, {}).setdefault(member.sent, []).append(member)
    states: dict[int, dict[str, CodeState]] = {}
    for code, products in by_code.items():
        _follow_code(code, products, states)
    return states


def _follow_code(
    code: str, products: dict[datetime, list[Member]], states: dict[int, dict[str, CodeState]]
) -> None:
    """Take the products that list one code in ``sent`` order; record each member's state."""
    live: list[Member] = []  # members holding the code live, from earlier products
    ended: CodeState | None = None  # how the event last ended for the code
    for sent in sorted(products):
        product = sorted(products[sent], key=_member_order)
        enders = [m for m in product if m.action in ENDING_ACTIONS]
        starters = [m for m in product if m.action not in ENDING_ACTIONS]
        adds = any(m.action in ADDING_ACTIONS for m in starters)
        outcome: CodeState | None = None  # a continuation of an ended code: nothing was live
        if enders:
            first = enders[0]
            outcome = CodeState(_ENDING_STATE[first.action], sent, first.alert_id)
        elif adds or ended is None:
            outcome = CodeState(SUPERSEDED, sent, starters[0].alert_id)
        for member in live:
            states.setdefault(member.alert_id, {})[code] = outcome or ended or LIVE
        for member in enders:
            own = CodeState(_ENDING_STATE[member.action], sent, member.alert_id)
            states.setdefault(member.alert_id, {})[code] = own
        if enders and not starters:
            ended, live = outcome, []
        elif enders or adds or ended is None:
            # A sibling never ends a sibling: a segment that lists the code live beside one
            # that ends it keeps it live.
            ended, live = None, starters
        else:
            for member in starters:
                states.setdefault(member.alert_id, {})[code] = ended
            live = []
    for member in live:
        states.setdefault(member.alert_id, {})[code] = LIVE


def _member_order(member: Member) -> tuple[str, int]:
    return (member.name, member.alert_id)


def combine_codes(per_event: Iterable[dict[str, CodeState]]) -> dict[str, CodeState]:
    """Merge one message's code states over its events: live in any event means active.

    Otherwise the code was in force until the last of its events let go of it: the ending
    with the latest ``ended_at`` names how it ended (superseded, then cancelled, then expired
    when two end at once).
    """
    merged: dict[str, CodeState] = {}
    for states in per_event:
        for code, state in states.items():
            known = merged.get(code)
            if known is None or _rank(state) > _rank(known):
                merged[code] = state
    return merged


_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _rank(state: CodeState) -> tuple[int, datetime, int]:
    if state.state == ACTIVE:
        return (1, _EARLIEST, 0)
    return (0, state.ended_at or _EARLIEST, -_PRECEDENCE[state.state])


def codes_verdict(states: Iterable[CodeState]) -> Verdict | None:
    """Return a message's VTEC verdict from the states of its UGC codes (None without any).

    Active while any code remains; otherwise superseded when a later product continued any of
    its codes, else cancelled at the earliest CAN that ended one of them, else expired.
    """
    found = list(states)
    if not found:
        return None
    if any(s.state == ACTIVE for s in found):
        return Verdict(ACTIVE)
    if any(s.state == SUPERSEDED for s in found):
        return Verdict(SUPERSEDED)
    cancels = [s.ended_at for s in found if s.state == CANCELLED and s.ended_at is not None]
    if cancels:
        return Verdict(CANCELLED, min(cancels))
    return Verdict(EXPIRED)


@functools.lru_cache(maxsize=4096)
def same_twin(same: str) -> tuple[str, ...]:
    """Return the UGC codes a SAME code is one-to-one with: its county and its marine zone."""
    if len(same) != 6 or not same.isdigit():
        return ()
    state, number = int(same[1:3]), same[3:]
    twins = []
    postal = FIPS_STATE.get(state)
    if postal is not None and same[0] == "0":
        twins.append(f"{postal}C{number}")
    marine = MARINE_AREAS.get(state)
    if marine is not None and same[0] == "0":
        twins.append(f"{marine}Z{number}")
    return tuple(twins)


def same_code_states(
    same: Iterable[str], ugc: dict[str, CodeState], message: CodeState
) -> dict[str, CodeState]:
    """Return the state of each SAME code of a message from its UGC codes' states.

    A SAME county code follows its UGC county code, and a marine SAME code its marine zone,
    when the message lists that twin. Any other SAME code (a county of a zone-based product)
    stays while any UGC code of the message remains, and then ends as the message did.
    """
    remains = any(s.state == ACTIVE for s in ugc.values())
    fallback = LIVE if remains or not ugc else _last_ending(ugc.values(), message)
    found: dict[str, CodeState] = {}
    for code in same:
        twin = next((ugc[t] for t in same_twin(code) if t in ugc), None)
        found[code] = twin if twin is not None else fallback
    return found


def _last_ending(states: Iterable[CodeState], message: CodeState) -> CodeState:
    """The message's ending, dated by the last of its codes to end (and the message that did)."""
    ended = sorted(
        (s for s in states if s.ended_at is not None), key=lambda s: (s.ended_at, s.state)
    )
    if not ended:
        return message
    same_state = [s for s in ended if s.state == message.state]
    last = (same_state or ended)[-1]
    return CodeState(message.state, message.ended_at or last.ended_at, last.ended_by)


def message_code_state(verdict: Verdict, *, ended_by: int | None = None) -> CodeState:
    """Return the state every code of a message takes from the message's own verdict."""
    if verdict.state == ACTIVE:
        return LIVE
    return CodeState(verdict.state, verdict.cancelled_at, ended_by)


def decide(
    *,
    msg_type: str,
    sent: datetime,
    expires: datetime | None,
    vtec: Verdict | None,
    updated: bool,
    cancelled_by: datetime | None,
    now: datetime,
) -> Verdict:
    """Return an alert's state from its own type, its chains, its referrers and the clock.

    ``updated`` tells whether a later Update references the alert; ``cancelled_by`` is the
    sent time of the earliest Cancel that references it. A cancellation that comes at or after
    the alert's ``expires`` is no early lift: the alert is expired, not cancelled.
    """
    if msg_type == "Cancel":
        verdict = Verdict(CANCELLED, sent)
    elif vtec is not None and vtec.state != ACTIVE:
        verdict = vtec
    elif updated:
        verdict = Verdict(SUPERSEDED)
    elif cancelled_by is not None:
        verdict = Verdict(CANCELLED, cancelled_by)
    else:
        verdict = Verdict(ACTIVE)
    if verdict.state == CANCELLED and expires is not None and verdict.cancelled_at is not None:
        if expires <= verdict.cancelled_at and msg_type != "Cancel":
            return Verdict(EXPIRED)
    if verdict.state == ACTIVE and expires is not None and expires <= now:
        return Verdict(EXPIRED)
    return verdict


Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Facts:
    """What the rules read of one message: header, VTEC events and actions, codes, references.

    ``keys`` and ``actions`` run in VTEC order; ``ugc`` and ``same`` in document order.
    """

    alert_id: int
    sender: str
    identifier: str
    sent: datetime
    msg_type: str
    expires: datetime | None
    keys: tuple[EventKey, ...] = ()
    actions: tuple[str, ...] = ()
    ugc: tuple[str, ...] = ()
    same: tuple[str, ...] = ()
    refs: tuple[Key, ...] = ()

    @property
    def has_vtec(self) -> bool:
        """Tell whether a VTEC string decides this message (any action but ROU)."""
        return any(action != ROUTINE for action in self.actions)

    def members(self) -> Iterator[tuple[EventKey, Member]]:
        """Yield the message's part in each of its VTEC events."""
        for key, action in zip(self.keys, self.actions, strict=True):
            yield key, Member(self.alert_id, self.identifier, self.sent, action, self.ugc)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A message's decided state and the state of each of its codes (SAME then UGC)."""

    verdict: Verdict
    codes: dict[str, CodeState]

    def remaining(self) -> list[str]:
        """Return the codes still in force, in the order they are held (SAME then UGC)."""
        if self.verdict.state != ACTIVE:
            return []
        return [code for code, state in self.codes.items() if state.state == ACTIVE]


def referred(referrers: Iterable[tuple[str, datetime]]) -> tuple[bool, datetime | None]:
    """Return (updated, cancelled_by) from the (msg_type, sent) of a message's referrers."""
    updated, cancelled = False, None
    for msg_type, sent in referrers:
        if msg_type == "Cancel":
            cancelled = sent if cancelled is None else min(cancelled, sent)
        else:
            updated = True
    return updated, cancelled


def outcome(
    facts: Facts,
    events: Mapping[EventKey, Mapping[int, dict[str, CodeState]]],
    *,
    updated: bool,
    cancelled_by: datetime | None,
    now: datetime,
) -> Outcome:
    """Decide one message from its events' code states (``event_code_states`` per key).

    With VTEC the UGC codes' states decide and CAP references nothing; without it (or with ROU
    only) today's reference rules decide and every code shares the message's state.
    """
    ugc: dict[str, CodeState] = {}
    vtec: Verdict | None = None
    if facts.has_vtec:
        ugc = combine_codes(
            events[key].get(facts.alert_id, {})
            for key, action in zip(facts.keys, facts.actions, strict=True)
            if action != ROUTINE
        )
        vtec = codes_verdict(ugc.values())
        updated, cancelled_by = False, None
    verdict = decide(
        msg_type=facts.msg_type,
        sent=facts.sent,
        expires=facts.expires,
        vtec=vtec,
        updated=updated,
        cancelled_by=cancelled_by,
        now=now,
    )
    whole = message_code_state(verdict)
    if not facts.has_vtec or verdict.state != ACTIVE:
        ugc = {code: whole if state.state == ACTIVE else state for code, state in ugc.items()}
    ugc_codes = {code: ugc.get(code, whole) for code in facts.ugc}
    codes = same_code_states(facts.same, ugc_codes, whole)
    codes.update(ugc_codes)
    return Outcome(verdict, codes)


def decide_all(messages: Iterable[Facts], *, now: datetime) -> dict[int, Outcome]:
    """Decide every message of a closed set (all members of their events, all referrers)."""
    found = list(messages)
    grouped: dict[EventKey, list[Member]] = {}
    for facts in found:
        for key, member in facts.members():
            grouped.setdefault(key, []).append(member)
    events = {key: event_code_states(members) for key, members in grouped.items()}
    by_key = {(f.sender, f.identifier): f for f in found}
    referrers: dict[int, list[tuple[str, datetime]]] = {}
    for facts in found:
        if facts.has_vtec:
            continue
        for ref in dict.fromkeys(facts.refs):
            target = by_key.get(ref)
            if target is not None:
                referrers.setdefault(target.alert_id, []).append((facts.msg_type, facts.sent))
    done: dict[int, Outcome] = {}
    for facts in found:
        updated, cancelled_by = referred(referrers.get(facts.alert_id, ()))
        done[facts.alert_id] = outcome(
            facts, events, updated=updated, cancelled_by=cancelled_by, now=now
        )
    return done


def live_codes(states: Mapping[int, dict[str, CodeState]]) -> set[str]:
    """Return the codes for which one event (its ``event_code_states``) is still live."""
    return {
        code
        for codes in states.values()
        for code, state in codes.items()
        if state.state == ACTIVE and code != NO_CODE
    }


def forward_refusal(
    alert: Alert, *, state: str, in_area: bool, events: Iterable[str] | None
) -> str:
    """Return why an alert must not go on the forward queue, or "" when it should.

    Only an active, in-area, ``Actual`` alert goes (with ``events``, only one whose SAME event
    code is among them; None lets every event through to the forwarding rules); never a
    Cancel, never a message carrying a CAN or EXP action, never a message that only upgrades
    (UPG) an old event, never a continuation (CON, EXT, COR, ROU).
    """
    # The checks in this order; the first that hits names the reason (each reason is built
    # only when its check hits: this runs for every stored message of a batch).
    actions = {vtec.action for vtec in alert.vtec}
    if alert.msg_type == "Cancel":
        return "cancellation"
    if actions & _TERMINAL_ACTIONS:
        return "terminal VTEC action"
    if actions and not actions & FORWARD_ACTIONS:
        return "no new event or area in the VTEC"
    if not actions and alert.msg_type != "Alert":
        return f"msgType {alert.msg_type}"
    if state != ACTIVE:
        return f"alert is {state}"
    if not in_area:
        return "outside the broadcast area"
    if alert.status != "Actual":
        return f"status {alert.status}"
    if events is not None and alert.event_code not in set(events):
        return "event not in the forward list"
    return ""


_TERMINAL_ACTIONS = frozenset({"CAN", "EXP"})
