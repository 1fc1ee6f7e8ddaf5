"""The reference model of ingest: the database path's outcomes, held in memory.

``ReferenceStore`` keeps messages as ``lifecycle.Facts`` and applies the same rules the batch
path applies (duplicate, related, stored or ignored, the lifecycle of every message a new one
touches) without a database. The tests compare the database path against it, and feed it every
ordering of NWS-like product chains: its final states must not depend on arrival order, and
must equal ``lifecycle.decide_all`` over the whole set.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from alertstation.alerts import lifecycle
from alertstation.alerts.lifecycle import Facts, Member, Outcome
from alertstation.alerts.matching import SAME_SPACE, decode_id, encode_geocode_lists
from alertstation.alerts.model import Alert
from alertstation.alerts.store import Matchers
from alertstation.alerts.vtec import EventKey

#: One code's final state as the tests compare it: (state, ended_at, identifier that ended it).
CodeView = tuple[str, datetime | None, str | None]
#: One message's final state: (state, cancelled_at, {code: CodeView}).
AlertView = tuple[str, datetime | None, dict[str, CodeView]]


def facts_of(alert: Alert, alert_id: int) -> Facts:
    """Return the rules' facts of a parsed alert (valid codes only, in document order)."""
    ugc, same = _codes(alert.same_codes, alert.ugc_codes)
    no_vtec = not any(v.action != lifecycle.ROUTINE for v in alert.vtec)
    return Facts(
        alert_id,
        alert.sender,
        alert.identifier,
        alert.sent,
        alert.msg_type,
        alert.expires,
        tuple(v.event_key(alert.sent) for v in alert.vtec),
        tuple(v.action for v in alert.vtec),
        ugc,
        same,
        tuple((r.sender, r.identifier) for r in alert.references) if no_vtec else (),
    )


@functools.lru_cache(maxsize=1024)
def _codes(same: tuple[str, ...], ugc: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """(UGC codes, SAME codes) of a message: valid ones, normalised, each once, in order."""
    flat, _offsets = encode_geocode_lists([[*same, *ugc]])
    ids = list(dict.fromkeys(int(i) for i in flat))
    return (
        tuple(decode_id(i) for i in ids if i >= SAME_SPACE),
        tuple(decode_id(i) for i in ids if i < SAME_SPACE),
    )


class ReferenceStore:
    """Messages held in memory, decided again whenever a related message arrives."""

    def __init__(self, matchers: Matchers | None = None, *, now: datetime) -> None:
        self.matchers = matchers
        self.now = now
        self.facts: dict[int, Facts] = {}
        self.outcomes: dict[int, Outcome] = {}
        self.by_key: dict[tuple[str, str], int] = {}
        self.members: dict[EventKey, list[int]] = defaultdict(list)
        self.referrers: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.all_refs: dict[tuple[str, str], list[int]] = defaultdict(list)

    def ingest(self, alert: Alert, *, explicit: bool = False) -> str:
        """Apply one message: return ``stored``, ``duplicate`` or ``ignored``."""
        key = (alert.sender, alert.identifier)
        if key in self.by_key:
            return "duplicate"
        facts = facts_of(alert, len(self.facts) + 1)
        related = {
            self.by_key[(r.sender, r.identifier)]
            for r in alert.references
            if (r.sender, r.identifier) in self.by_key
        }
        related.update(self.all_refs.get(key, ()))
        for event in facts.keys:
            related.update(self.members.get(event, ()))
        stored_area = True
        if self.matchers is not None:
            codes = (*facts.same, *facts.ugc)
            stored_area = self.matchers.classify(alert, codes).stored_area
        if not (explicit or stored_area or related):
            return "ignored"
        self.facts[facts.alert_id] = facts
        self.by_key[key] = facts.alert_id
        for event in facts.keys:
            self.members[event].append(facts.alert_id)
        for ref in dict.fromkeys((r.sender, r.identifier) for r in alert.references):
            self.all_refs[ref].append(facts.alert_id)
        for ref in facts.refs:
            self.referrers[ref].append(facts.alert_id)
        self._recompute({facts.alert_id, *related})
        return "stored"

    def ingest_all(self, alerts: Iterable[Alert], *, explicit: bool = False) -> None:
        """Apply messages in order."""
        for alert in alerts:
            self.ingest(alert, explicit=explicit)

    def _recompute(self, wanted: set[int]) -> None:
        keys = {key for alert_id in wanted for key in self.facts[alert_id].keys}
        events = {
            key: lifecycle.event_code_states(
                member
                for alert_id in self.members[key]
                for found, member in self.facts[alert_id].members()
                if found == key
            )
            for key in keys
        }
        for alert_id in wanted:
            facts = self.facts[alert_id]
            updated, cancelled_by = lifecycle.referred(
                (self.facts[i].msg_type, self.facts[i].sent)
                for i in self.referrers.get((facts.sender, facts.identifier), ())
            )
            self.outcomes[alert_id] = lifecycle.outcome(
                facts, events, updated=updated, cancelled_by=cancelled_by, now=self.now
            )

    def view(self) -> dict[str, AlertView]:
        """Return every stored message's final state by identifier."""
        return {
            self.facts[alert_id].identifier: view_of(outcome, self._name)
            for alert_id, outcome in self.outcomes.items()
        }

    def _name(self, alert_id: int | None) -> str | None:
        return None if alert_id is None else self.facts[alert_id].identifier


def view_of(outcome: Outcome, name: object) -> AlertView:
    """Return an outcome as the tests compare it, naming enders through ``name(alert_id)``."""
    codes = {
        code: (state.state, state.ended_at, name(state.ended_by))  # type: ignore[operator]
        for code, state in outcome.codes.items()
    }
    return (outcome.verdict.state, outcome.verdict.cancelled_at, codes)


def decide_view(alerts: Iterable[Alert], *, now: datetime) -> dict[str, AlertView]:
    """Return the final states of a whole set of messages, decided at once."""
    facts = [facts_of(alert, i) for i, alert in enumerate(alerts, start=1)]
    names = {f.alert_id: f.identifier for f in facts}
    outcomes = lifecycle.decide_all(facts, now=now)

    def name(alert_id: int | None) -> str | None:
        return None if alert_id is None else names[alert_id]

    return {names[i]: view_of(outcome, name) for i, outcome in outcomes.items()}


__all__ = ["AlertView", "CodeView", "Member", "ReferenceStore", "decide_view", "facts_of"]
