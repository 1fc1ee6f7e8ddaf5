"""Decide each stored alert's state from its VTEC chains, its CAP references and the clock.

The rules are pure functions of facts the store reads (docs/alerts-lifecycle.md), so the state
of every alert a new message touches is recomputed from scratch: the outcome never depends on
the order messages arrived in, and a chain that was cancelled stays cancelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from alertstation.alerts.model import Alert

ACTIVE = "active"
EXPIRED = "expired"
CANCELLED = "cancelled"
SUPERSEDED = "superseded"
STATES = (ACTIVE, EXPIRED, CANCELLED, SUPERSEDED)

#: VTEC actions that end a chain: after them nothing in the chain is live.
ENDING_ACTIONS = frozenset({"CAN", "EXP", "UPG"})
#: VTEC actions whose message is put on the forward queue (new event or new area).
FORWARD_ACTIONS = frozenset({"NEW", "EXA", "EXB"})
#: What an ending action does to the chain's live head (and to the ending message itself).
_ENDING_STATE = {"CAN": CANCELLED, "EXP": EXPIRED, "UPG": SUPERSEDED}
_PRECEDENCE = {CANCELLED: 0, EXPIRED: 1, SUPERSEDED: 2}


@dataclass(frozen=True, slots=True)
class Verdict:
    """Hold a decided state and, for a cancellation, when it took effect."""

    state: str
    cancelled_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ChainRow:
    """Name one message's part in a VTEC chain: the alert, its sent time, the action."""

    alert_id: int
    sent: datetime
    action: str


def chain_verdicts(rows: Iterable[ChainRow]) -> dict[int, Verdict]:
    """Return each member's verdict in one chain.

    The latest non-ending member (by sent, then id) is the chain's head; earlier ones are
    superseded. When the chain holds an ending action (the earliest one counts) the head takes
    its effect: CAN cancels at the CAN's sent time, EXP expires, UPG supersedes. Ending messages
    get the same effect for their own part.
    """
    members = sorted(rows, key=lambda row: (row.sent, row.alert_id))
    enders = [row for row in members if row.action in ENDING_ACTIONS]
    live = [row for row in members if row.action not in ENDING_ACTIONS]
    verdicts: dict[int, Verdict] = {row.alert_id: Verdict(SUPERSEDED) for row in live[:-1]}
    ender = enders[0] if enders else None
    for row in enders:
        verdicts[row.alert_id] = _ending_verdict(row.action, row.sent)
    if live:
        head = live[-1]
        verdicts[head.alert_id] = (
            _ending_verdict(ender.action, ender.sent) if ender else Verdict(ACTIVE)
        )
    return verdicts


def chain_is_terminal(rows: Iterable[ChainRow]) -> bool:
    """Tell whether a chain holds an ending action (CAN, EXP or UPG)."""
    return any(row.action in ENDING_ACTIONS for row in rows)


def _ending_verdict(action: str, sent: datetime) -> Verdict:
    state = _ENDING_STATE[action]
    return Verdict(state, sent if state == CANCELLED else None)


def combine_roles(verdicts: Iterable[Verdict]) -> Verdict | None:
    """Merge one message's verdicts over its chains: live in any chain means active.

    Otherwise cancelled beats expired beats superseded; None when the message has no chain.
    """
    found = list(verdicts)
    if not found:
        return None
    if any(v.state == ACTIVE for v in found):
        return Verdict(ACTIVE)
    return min(found, key=lambda v: (_PRECEDENCE[v.state], v.cancelled_at or datetime.max))


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
