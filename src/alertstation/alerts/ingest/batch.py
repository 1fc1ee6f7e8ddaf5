"""Ingest many parsed alerts in one transaction with a few statements (the batch path).

``ingest_batch`` reads every stored row the batch can touch in a handful of queries up front,
applies the per-message rules (duplicate check, related alerts, the lifecycle of
``alerts.lifecycle`` per VTEC event and per code, queueing, skipping) in memory in arrival
order, and writes the result at the end with multi-row inserts and a few updates. The
``alerts`` generation moves once per batch (not once per stored message).
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, bindparam, tuple_, update

from alertstation.alerts import lifecycle
from alertstation.alerts.ingest.matchers import current_matchers, matchers_for
from alertstation.alerts.ingest.rows import (
    ALERT_COLUMNS,
    ALERT_KEY,
    GEOCODE_COLUMNS,
    INSERT_ALERTS,
    INSERT_CHILDREN,
    QUEUE_COLUMNS,
    REF_COLUMNS,
    VTEC_COLUMNS,
    alert_fields,
    native_writes,
    pipeline,
    row_insert,
)
from alertstation.alerts.ingest.sql import (
    _BY_KEY,
    _CHAINS,
    _CODES,
    _FACTS,
    _FIRST_READS,
    _FIRST_READS_AND_SETTINGS,
    _FIXED_KEYS,
    _JSON_KEYS,
    _JSON_READS,
    _JSON_READS_AND_SETTINGS,
    _KEY_COLUMNS,
    _OWN_KEYS,
    _REFERRERS,
    _REFS_OF,
    IN_CHUNK,
    RELATED_CHAINS,
    RELATED_CODES,
    RELATED_FACTS,
    RELATED_JSON,
    RELATED_KEYS,
    RELATED_PENDING,
    RELATED_REFERRERS,
    RELATED_REFS,
    RELATED_TARGETS,
    Key,
    _fixed_params,
    _fixed_reads,
)
from alertstation.alerts.lifecycle import CodeState, Member
from alertstation.alerts.matching import SAME_SPACE, decode_id, encode_geocode_lists
from alertstation.alerts.model import Alert
from alertstation.alerts.store import GENERATION, ChainKey, IngestResult, Matchers, _check_keys
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
)
from alertstation.alerts.tables import eas_forward_queue as _queue
from alertstation.db.generations import touch_generation
from alertstation.db.types import utcnow
from alertstation.notifications import notify
from alertstation.notifications.events import ALERT_IN_AREA
from alertstation.notifications.service import has_subscribers

SKIP_REASON = "event ended before it aired"
_ID_BASE = 1 << 62  # provisional ids of new alerts: above every stored id, in arrival order
T = TypeVar("T")
_A, _V, _G = cap_alerts.c, cap_alert_vtec.c, cap_alert_geocodes.c
_UPDATE_STATES = update(cap_alerts).where(_A.id == bindparam("b_id"))
_UPDATE_CODES = update(cap_alert_geocodes).where(
    _G.alert_id == bindparam("b_alert"), _G.code_id == bindparam("b_code")
)
_DEAD = (lifecycle.CANCELLED, lifecycle.EXPIRED)
#: The code of an id (``decode_id``), remembered: every load names the codes of a whole event.
_code_name = functools.lru_cache(maxsize=1 << 16)(decode_id)
# The flag writes and the skip of pending forwards, built once (with an expanding key list).
_SET_TERMINAL = {
    terminal: update(cap_alert_vtec)
    .where(
        tuple_(*_KEY_COLUMNS).in_(bindparam("keys", expanding=True)),
        _V.chain_terminal.is_(not terminal),
    )
    .values(chain_terminal=terminal)
    for terminal in (True, False)
}
_SKIP_PENDING = (
    update(_queue)
    .where(_queue.c.alert_id.in_(bindparam("ids", expanding=True)), _queue.c.state == "pending")
    .values(state="skipped", reason=SKIP_REASON)
)


@dataclass(slots=True)
class _Facts:
    """What the lifecycle rules read of one alert (stored or new in this batch)."""

    id: int
    sender: str
    identifier: str
    sent: datetime
    msg_type: str
    expires: datetime | None
    state: str
    cancelled_at: datetime | None
    in_area: bool
    match_code: bool = False
    match_geometry: bool = False
    keys: list[ChainKey] = field(default_factory=list)  # one per VTEC row, in position order
    actions: list[str] = field(default_factory=list)
    refs: list[Key] = field(default_factory=list)


@dataclass(slots=True)
class _Codes:
    """One alert's stored code ids in document order (SAME then UGC) and their states."""

    ids: list[int]
    states: dict[int, CodeState]
    names: list[str] = field(default_factory=list)
    same: tuple[str, ...] = ()
    ugc: tuple[str, ...] = ()

    @classmethod
    def of(cls, ids: list[int], states: dict[int, CodeState]) -> _Codes:
        names = [_code_name(i) for i in ids]
        same = tuple(n for i, n in zip(ids, names, strict=True) if i < SAME_SPACE)
        ugc = tuple(n for i, n in zip(ids, names, strict=True) if i >= SAME_SPACE)
        return cls(ids, states, names, same, ugc)

    def ended(self) -> bool:
        """Tell whether any code has ended."""
        return any(state.state != lifecycle.ACTIVE for state in self.states.values())


@dataclass(slots=True)
class _Link:
    """One member of a VTEC event as the batch knows it."""

    alert_id: int
    identifier: str
    sent: datetime
    action: str


@dataclass(slots=True)
class _New:
    """A new alert of the batch: its facts and the rows it will be stored with."""

    facts: _Facts
    alert: Alert
    stored_area: bool
    explicit: bool


def _chunks(items: Sequence[T], size: int = IN_CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _Batch:
    """The stored rows one batch can touch, held in memory, and what the batch changes."""

    def __init__(
        self, conn: Connection, alerts: Sequence[Alert], now: datetime, *, settings: bool = False
    ) -> None:
        self.conn = conn
        self.now = now
        # With ``settings``: the rows of _SETTINGS_KEY, when the first reads could carry them.
        self.settings_key: tuple[Any, ...] | None = None
        self._settings = settings
        self._json = conn.dialect.name in _JSON_KEYS  # key lists bound as JSON (_JSON_READS)
        self.matchers: Matchers | None = None
        self.by_key: dict[Key, int] = {}  # (sender, identifier) -> id, stored and new
        self.facts: dict[int, _Facts] = {}  # full facts: stored alerts that can change, and new
        self.codes: dict[int, _Codes] = {}  # codes of every event member and related alert
        self.state: dict[int, str] = {}  # current state of every known stored or new alert
        self.in_area: dict[int, bool] = {}
        self.chains: dict[ChainKey, list[_Link]] = defaultdict(list)
        # (sender, identifier) -> (referrer id, msg_type, sent, whether its references decide)
        self.referrers: dict[Key, list[tuple[int, str, datetime, bool]]] = defaultdict(list)
        self.new: list[_New] = []
        self.changed: set[int] = set()  # stored alerts whose state or area flags changed
        self.changed_codes: dict[tuple[int, int], CodeState] = {}  # stored (alert, code) states
        # The chain_terminal flags of each event's stored VTEC rows, as read with the chain.
        self.flags: dict[ChainKey, set[bool]] = defaultdict(set)
        # Stored alerts with a pending forward, of those whose entries were read (pending_known).
        self.pending: set[int] = set()
        self.pending_known: set[int] = set()
        self.terminal: set[ChainKey] = set()  # events found ended for every code
        # Events found live again: a message that arrived late (a NEW after the CAN of some of
        # its codes) brought codes the ending never named.
        self.reopened: set[ChainKey] = set()
        self.skip_stored: set[int] = set()  # stored alerts whose pending entries are skipped
        self.queue: list[dict[str, Any]] = []
        self.queued: dict[int, dict[str, Any]] = {}
        self._load(alerts)

    # -- reading -----------------------------------------------------------------------------

    def _rows(self, statement: Any, keys: Iterable[Any]) -> Iterator[Any]:
        """Run one of the prebuilt reads for ``keys``, a few hundred keys at a time."""
        for part in _chunks(sorted(keys)):
            yield from self.conn.execute(statement, {"keys": list(part)})

    def _load(self, alerts: Sequence[Alert]) -> None:
        own = {(x.sender, x.identifier) for x in alerts}
        refs = {(ref.sender, ref.identifier) for x in alerts for ref in x.references}
        identifiers = {x.identifier for x in alerts}
        keys = {v.event_key(x.sent) for x in alerts for v in x.vtec}
        if self._json or max(len(own | refs), len(identifiers), len(keys)) <= IN_CHUNK:
            related = self._load_first(own | refs, identifiers, keys)
        else:
            for row in self._rows(_BY_KEY, own | refs):
                self._know(row.id, row.sender, row.identifier, row.state, row.in_area)
            related = self._load_referrers(identifiers) | self._load_chains(keys)
        related |= {self.by_key[k] for k in refs if k in self.by_key}
        for key in keys:  # every stored row of the batch's events was read: flags are known
            self.flags.setdefault(key, set())
        # Stored alerts a batch message relates to can change: read all they are judged by.
        if related:
            self._load_related(related, keys, identifiers)

    def _load_first(self, wanted: set[Key], identifiers: set[str], keys: set[ChainKey]) -> set[int]:
        """Run the three first reads (by key, referrers, chains) as one statement.

        Return the ids of the referrers and chain members found, as the separate reads do.
        """
        own, idents, chains = sorted(wanted), sorted(identifiers), sorted(keys)
        statement: Any
        if max(len(own), len(idents), len(chains)) <= _FIXED_KEYS:
            statement = _fixed_reads(len(own), len(idents), len(chains), self._settings)
            params = _fixed_params(own, idents, chains)
        elif self._json:
            statement = _JSON_READS_AND_SETTINGS if self._settings else _JSON_READS
            params = {
                "own": json.dumps(own),
                "idents": json.dumps(idents),
                "chains": json.dumps(chains),
            }
        else:
            statement = _FIRST_READS_AND_SETTINGS if self._settings else _FIRST_READS
            params = {"own": own, "idents": idents, "chains": chains}
        rows: list[list[Any]] = [[], [], [], []]
        for row in self.conn.execute(statement, params):
            rows[row.kind].append(row)
        if self._settings:
            self.settings_key = tuple(sorted((row.k1, row.k2) for row in rows[3]))
        for row in rows[0]:
            self._know(row.id, row.k1, row.k2, row.state, row.in_area)
        found: set[int] = set()
        for row in rows[1]:
            entry = (row.id, row.msg_type, row.sent, bool(row.in_area))  # in_area: decides
            self.referrers[(row.k1, row.k2)].append(entry)
            found.add(row.id)
        for row in rows[2]:
            key: ChainKey = (row.office, row.phenomenon, row.significance, row.etn, row.year)
            self.chains[key].append(_Link(row.id, row.k2, row.sent, row.action))
            self.state.setdefault(row.id, row.state)
            self.flags[key].add(bool(row.in_area))  # a chain row's chain_terminal
            found.add(row.id)
        return found

    def _load_related(self, related: set[int], keys: set[ChainKey], identifiers: set[str]) -> None:
        """Read all the rules judge the stored alerts that can change by (one statement on SQLite).

        Their facts, VTEC keys, references, codes and pending forwards; the referrers of their
        identifiers and the members of their other events (with those members' codes); the
        alerts they reference (``sql._related_reads``).
        """
        if self.conn.dialect.name == "postgresql":
            self._load_related_apart(related, keys, identifiers)
            return
        found = self.conn.execute(RELATED_JSON, {"ids": json.dumps(sorted(related))})
        parts: list[list[Any]] = [[] for _kind in range(RELATED_PENDING + 1)]
        for row in found:
            parts[row[0]].append(row)  # by kind
        for row in parts[RELATED_FACTS]:
            self._know(row.id, row.t1, row.t2, row.t4, row.b1)
            self.facts[row.id] = _Facts(
                row.id, row.t1, row.t2, row.d1, row.t3, row.d2, row.t4, row.d3, row.b1,
                row.b2, row.b3,
            )  # fmt: skip
        for row in parts[RELATED_KEYS]:  # in position order
            facts = self.facts[row.id]
            facts.keys.append((row.t2, row.t3, row.t4, row.n1, row.n2))
            facts.actions.append(row.t1)
        targets: dict[int, list[Key]] = defaultdict(list)
        for row in parts[RELATED_REFS]:
            targets[row.id].append((row.t1, row.t2))
        for alert_id, refs in targets.items():
            self.facts[alert_id].refs = refs
        for row in parts[RELATED_REFERRERS]:
            if row.t2 not in identifiers:  # the first reads had those
                self.referrers[(row.t1, row.t2)].append((row.id, row.t3, row.d1, bool(row.b1)))
        members = self._take_chains(parts[RELATED_CHAINS], keys)
        for row in parts[RELATED_TARGETS]:
            self._know(row.id, row.t1, row.t2, row.t3, row.b1)
        self.pending.update(row.id for row in parts[RELATED_PENDING])
        self.pending_known.update(related)
        # kind, id, t1-t6, d1-d3, b1-b3, n1-n3: (id, code_id, state, ended_at, ended_by)
        self._take_codes(((r[1], r[14], r[2], r[8], r[15]) for r in parts[RELATED_CODES]), related)
        other = members - related  # members of the related alerts' other events only
        if other:
            found = self._rows(_CODES, other)
            self._take_codes(((r[0], r[1], r[2], r[3], r[4]) for r in found), other)

    def _load_related_apart(
        self, related: set[int], keys: set[ChainKey], identifiers: set[str]
    ) -> None:
        """PostgreSQL: the related reads one after the other, each only when it has keys.

        Each searches its index; the one statement's subqueries made PostgreSQL scan tables
        (its pending forwards are not read: their skip is written as before, in the pipeline).
        """
        for row in self._rows(_FACTS, related):
            self._know(row.id, row.sender, row.identifier, row.state, row.in_area)
            self.facts[row.id] = _Facts(
                row.id, row.sender, row.identifier, row.sent, row.msg_type, row.expires,
                row.state, row.cancelled_at, row.in_area, row.match_code, row.match_geometry,
            )  # fmt: skip
        other_keys: set[ChainKey] = set()
        for row in self._rows(_OWN_KEYS, related):
            key: ChainKey = tuple(row[2:])  # type: ignore[assignment]
            self.facts[row.alert_id].keys.append(key)
            self.facts[row.alert_id].actions.append(row.action)
            other_keys.add(key)
        self._load_chains(other_keys - keys)
        self._load_referrers({f.identifier for f in self.facts.values()} - identifiers)
        targets: dict[int, list[Key]] = defaultdict(list)
        for row in self._rows(_REFS_OF, related):
            targets[row.alert_id].append((row.ref_sender, row.ref_identifier))
        wanted = {k for refs in targets.values() for k in refs} - set(self.by_key)
        for row in self._rows(_BY_KEY, wanted):
            self._know(row.id, row.sender, row.identifier, row.state, row.in_area)
        for alert_id, refs in targets.items():
            self.facts[alert_id].refs = refs
        ids = related | {link.alert_id for links in self.chains.values() for link in links}
        found = self._rows(_CODES, ids)
        self._take_codes(((r[0], r[1], r[2], r[3], r[4]) for r in found), ids)

    def _take_chains(self, rows: list[Any], keys: set[ChainKey]) -> set[int]:
        """Take the members of the related alerts' other events; return their ids."""
        members: set[int] = set()
        for row in rows:
            key: ChainKey = (row.t4, row.t5, row.t6, row.n1, row.n2)
            if key not in keys:  # the first reads had those
                self.chains[key].append(_Link(row.id, row.t1, row.d1, row.t2))
                self.state.setdefault(row.id, row.t3)
                self.flags[key].add(bool(row.b1))
                members.add(row.id)
        return members

    def _take_codes(self, rows: Iterable[tuple[Any, ...]], ids: set[int]) -> None:
        """Take the codes and code states of these stored alerts.

        ``rows``: (alert id, code id, state, ended_at, ended_by), in document order.
        """
        codes: dict[int, tuple[list[int], dict[int, CodeState]]] = {}
        live, active = lifecycle.LIVE, lifecycle.ACTIVE
        for alert_id, code_id, state, ended_at, ended_by in rows:
            own, states = codes.setdefault(alert_id, ([], {}))
            own.append(code_id)
            if state == active and ended_at is None and ended_by is None:
                states[code_id] = live  # equal to CodeState(ACTIVE), one object for all
            else:
                states[code_id] = CodeState(state, ended_at, ended_by)
        for alert_id in ids:
            own, states = codes.get(alert_id, ([], {}))
            self.codes[alert_id] = _Codes.of(own, states)

    def _know(self, alert_id: int, sender: str, identifier: str, state: str, area: bool) -> None:
        self.by_key[(sender, identifier)] = alert_id
        self.state.setdefault(alert_id, state)
        self.in_area.setdefault(alert_id, area)

    def _load_referrers(self, identifiers: set[str]) -> set[int]:
        """Read who references these identifiers (referrer id, msg_type, sent, decides)."""
        found: set[int] = set()
        for row in self._rows(_REFERRERS, identifiers):
            key = (row.ref_sender, row.ref_identifier)
            entry = (row.alert_id, row.msg_type, row.sent, bool(row.decides))
            self.referrers[key].append(entry)
            found.add(row.alert_id)
        return found

    def _load_chains(self, keys: set[ChainKey]) -> set[int]:
        """Read every stored member of these events (and its state); return the member ids."""
        found: set[int] = set()
        for row in self._rows(_CHAINS, keys):
            key: ChainKey = tuple(row[6:])  # type: ignore[assignment]
            self.chains[key].append(_Link(row.alert_id, row.identifier, row.sent, row.action))
            self.state.setdefault(row.alert_id, row.state)
            self.flags[key].add(bool(row.chain_terminal))
            found.add(row.alert_id)
        return found

    # -- the per-message rules, in memory ------------------------------------------------------

    def ingest(
        self, alert: Alert, matchers: Matchers, *, explicit: bool, code_ids: list[int]
    ) -> tuple[str, int | None, str | None, bool, bool]:
        """Apply one message: return (outcome, id, state, queued, in_area).

        ``code_ids`` are the ids of the alert's valid codes, SAME then UGC, in document order.
        """
        existing = self.by_key.get((alert.sender, alert.identifier))
        if existing is not None:
            return "duplicate", existing, self.state[existing], False, self.in_area[existing]
        self.matchers = matchers
        codes = _Codes.of(code_ids, {})
        match = matchers.classify(alert, (*codes.same, *codes.ugc))
        in_area, stored_area = match.in_area, match.stored_area
        keys = [vtec.event_key(alert.sent) for vtec in alert.vtec]
        related = self._related(alert, keys)
        if not (explicit or stored_area or related):
            return "ignored", None, None, False, False
        alert_id = _ID_BASE + len(self.new)
        refs = list(dict.fromkeys((r.sender, r.identifier) for r in alert.references))
        actions = [vtec.action for vtec in alert.vtec]
        facts = _Facts(
            alert_id, alert.sender, alert.identifier, alert.sent, alert.msg_type, alert.expires,
            lifecycle.ACTIVE, None, in_area, match.by_code, match.by_geometry, keys, actions,
            refs,
        )  # fmt: skip
        self.new.append(_New(facts, alert, stored_area, explicit))
        self.facts[alert_id] = facts
        self.codes[alert_id] = codes
        self._know(alert_id, alert.sender, alert.identifier, lifecycle.ACTIVE, in_area)
        for key, action in zip(keys, actions, strict=True):
            self.chains[key].append(_Link(alert_id, alert.identifier, alert.sent, action))
        decides = not any(action != lifecycle.ROUTINE for action in actions)
        for ref in refs:
            self.referrers[ref].append((alert_id, alert.msg_type, alert.sent, decides))
        self._recompute({alert_id, *related})
        state, in_area = facts.state, facts.in_area
        refusal = lifecycle.forward_refusal(
            alert, state=state, in_area=in_area, events=matchers.forward_events
        )
        if not refusal:
            entry = {
                "alert_id": alert_id,
                "event_code": alert.event_code,
                "queued_at": self.now,
                "state": "pending",
                "reason": "",
            }
            self.queue.append(entry)
            self.queued[alert_id] = entry
        return "stored", alert_id, state, not refusal, in_area

    def _related(self, alert: Alert, keys: Sequence[ChainKey]) -> set[int]:
        found = {
            self.by_key[(r.sender, r.identifier)]
            for r in alert.references
            if (r.sender, r.identifier) in self.by_key
        }
        found.update(row[0] for row in self.referrers.get((alert.sender, alert.identifier), ()))
        for key in keys:
            found.update(link.alert_id for link in self.chains.get(key, ()))
        return found

    def _members(self, key: ChainKey) -> list[Member]:
        return [
            Member(link.alert_id, link.identifier, link.sent, link.action,
                   self.codes[link.alert_id].ugc)
            for link in self.chains[key]
        ]  # fmt: skip

    def _recompute(self, wanted: set[int]) -> None:
        """Decide the given alerts again from their events, referrers and the clock."""
        own_keys = {key for alert_id in wanted for key in self.facts[alert_id].keys}
        events = {key: lifecycle.event_code_states(self._members(key)) for key in own_keys}
        for key, states in events.items():
            actions = {link.action for link in self.chains[key]}
            if actions & lifecycle.ENDING_ACTIONS and not lifecycle.live_codes(states):
                self.terminal.add(key)
                self.reopened.discard(key)
            elif actions & lifecycle.ENDING_ACTIONS:  # may have been found ended before
                self.terminal.discard(key)
                self.reopened.add(key)
        ended: list[int] = []
        for alert_id in sorted(wanted):
            facts, codes = self.facts[alert_id], self.codes[alert_id]
            updated, cancelled_by = lifecycle.referred(
                (msg_type, sent)
                for _id, msg_type, sent, decides in self.referrers.get(
                    (facts.sender, facts.identifier), ()
                )
                if decides
            )
            outcome = lifecycle.outcome(
                lifecycle.Facts(
                    alert_id, facts.sender, facts.identifier, facts.sent, facts.msg_type,
                    facts.expires, tuple(facts.keys), tuple(facts.actions), codes.ugc, codes.same,
                ),
                events, updated=updated, cancelled_by=cancelled_by, now=self.now,
            )  # fmt: skip
            verdict = outcome.verdict
            codes_changed = self._apply_codes(alert_id, facts, codes, outcome.codes)
            if (verdict.state, verdict.cancelled_at) == (facts.state, facts.cancelled_at):
                if codes_changed and alert_id < _ID_BASE:
                    self.changed.add(alert_id)
                continue
            facts.state, facts.cancelled_at = verdict.state, verdict.cancelled_at
            self.state[alert_id] = verdict.state
            if alert_id < _ID_BASE:
                self.changed.add(alert_id)
            if verdict.state != lifecycle.ACTIVE:
                ended.append(alert_id)
        if ended:
            self._skip_ended(ended, wanted, events)

    def _apply_codes(
        self, alert_id: int, facts: _Facts, codes: _Codes, found: dict[str, CodeState]
    ) -> bool:
        """Take an alert's new code states; match it again when codes ended. True on a change."""
        new_states = {i: found[n] for i, n in zip(codes.ids, codes.names, strict=True)}
        if new_states == codes.states:
            return False
        had_ended = codes.ended()
        if alert_id < _ID_BASE:
            for code_id, state in new_states.items():
                if codes.states.get(code_id) != state:
                    self.changed_codes[(alert_id, code_id)] = state
        codes.states = new_states
        if had_ended or codes.ended():
            self._rematch(facts, codes, alert_id)
        return True

    def _rematch(self, facts: _Facts, codes: _Codes, alert_id: int) -> None:
        """Match an alert again with the codes still in force (all when none remains)."""
        matchers = self.matchers
        if matchers is None:
            return
        pairs = zip(codes.ids, codes.names, strict=True)
        live = [n for i, n in pairs if codes.states[i].state == lifecycle.ACTIVE]
        by_code = matchers.area.matches(live or codes.names)
        facts.match_code = by_code
        facts.in_area = by_code or (matchers.match_polygons and facts.match_geometry)
        self.in_area[alert_id] = facts.in_area

    def _dead(self, alert_id: int, events: dict[ChainKey, dict[int, dict[str, CodeState]]]) -> bool:
        """Tell whether an alert's event is over for all of its codes (its forward is moot)."""
        facts = self.facts.get(alert_id)
        state = self.state.get(alert_id)
        if state in _DEAD:
            return True
        if facts is None or state != lifecycle.SUPERSEDED:
            return False
        wanted = [k for k, a in zip(facts.keys, facts.actions, strict=True) if a != "ROU"]
        if not wanted:
            return False
        ugc = set(self.codes[alert_id].ugc) or {lifecycle.NO_CODE}
        for key in wanted:
            states = events.get(key)
            if states is None:
                states = lifecycle.event_code_states(self._members(key))
            if ugc & (lifecycle.live_codes(states) | _no_code(states)):
                return False
        return True

    def _skip_ended(
        self,
        ended: Sequence[int],
        wanted: set[int],
        events: dict[ChainKey, dict[int, dict[str, CodeState]]],
    ) -> None:
        """Skip pending entries of alerts whose event ended, and of what they referenced."""
        ids = {alert_id for alert_id in wanted if self._dead(alert_id, events)}
        for alert_id in ended:
            facts = self.facts[alert_id]
            # Only a message without VTEC takes what it references down with it: the
            # references of a VTEC message decide nothing.
            if alert_id in ids and all(a == lifecycle.ROUTINE for a in facts.actions):
                refs = facts.refs
                ids.update(self.by_key[k] for k in refs if k in self.by_key)
        for alert_id in ids:
            if alert_id >= _ID_BASE:
                entry = self.queued.get(alert_id)
                if entry is not None and entry["state"] == "pending":
                    entry.update(state="skipped", reason=SKIP_REASON)
            else:
                self.skip_stored.add(alert_id)

    # -- writing -------------------------------------------------------------------------------

    def write(self) -> dict[int, int]:
        """Write the batch's rows and changes; return provisional id -> stored id."""
        conn, now = self.conn, self.now
        real: dict[int, int] = {}
        if self.new:
            rows = [
                (
                    *alert_fields(item.alert),
                    item.facts.state, item.facts.cancelled_at, item.alert.signature.status,
                    item.alert.signature.reason, item.facts.in_area, item.stored_area,
                    item.facts.match_code, item.facts.match_geometry, item.explicit,
                    self.poll_source_id, now, now,
                )
                for item in self.new
            ]  # fmt: skip
            if native_writes(conn):
                writer = row_insert(cap_alerts.name, ALERT_COLUMNS, conn.dialect)
                ids: Iterable[int] = writer.returning_ids(conn, rows, ALERT_KEY)
            else:
                dicts = [dict(zip(ALERT_COLUMNS, row, strict=True)) for row in rows]
                ids = conn.execute(INSERT_ALERTS, dicts).scalars()
            real = {item.facts.id: int(i) for item, i in zip(self.new, ids, strict=True)}
        with pipeline(conn):
            self._write_rest(real)
            if self.new or self.changed:
                touch_generation(conn, GENERATION)
        return real

    def _write_rest(self, real: dict[int, int]) -> None:
        conn, now = self.conn, self.now
        if self.changed:
            rows = []
            for i in sorted(self.changed):
                facts = self.facts[i]
                rows.append(
                    {
                        "b_id": i, "state": facts.state, "cancelled_at": facts.cancelled_at,
                        "in_area": facts.in_area, "match_code": facts.match_code,
                        "updated_at": now,
                    }
                )  # fmt: skip
            conn.execute(_UPDATE_STATES, rows)
        if self.changed_codes:
            conn.execute(
                _UPDATE_CODES,
                [
                    {
                        "b_alert": alert_id, "b_code": code_id, "state": state.state,
                        "ended_at": state.ended_at, "ended_by": _real(state.ended_by, real),
                    }
                    for (alert_id, code_id), state in sorted(self.changed_codes.items())
                ],
            )  # fmt: skip
        for keys, terminal in ((self.terminal, True), (self.reopened, False)):
            # Only events with a stored row flagged otherwise (the flags read with the chain;
            # an event none of whose rows was read is written as before).
            wanted = [k for k in keys if k not in self.flags or (not terminal) in self.flags[k]]
            for part in _chunks(sorted(wanted)):
                conn.execute(_SET_TERMINAL[terminal], {"keys": list(part)})
        self._insert_children(real)
        # Only alerts with a pending entry (or whose entries were not read).
        skip = [i for i in self.skip_stored if i in self.pending or i not in self.pending_known]
        for part in _chunks(sorted(skip)):
            conn.execute(_SKIP_PENDING, {"ids": list(part)})

    def _insert_children(self, real: dict[int, int]) -> None:
        geocodes: list[tuple[Any, ...]] = []
        refs: list[tuple[Any, ...]] = []
        vtec: list[tuple[Any, ...]] = []
        terminal = self.terminal
        for item in self.new:
            alert_id = real[item.facts.id]
            codes = self.codes[item.facts.id]
            for position, code_id in enumerate(codes.ids):
                state = codes.states.get(code_id, lifecycle.LIVE)
                ended_by = _real(state.ended_by, real)
                geocodes.append(
                    (alert_id, code_id, position, state.state, state.ended_at, ended_by)
                )
            if item.alert.references:
                sent_of = {(r.sender, r.identifier): r.sent for r in item.alert.references}
                refs += [(alert_id, s, i, t) for (s, i), t in sent_of.items()]
            vtec += [
                (
                    alert_id, position, v.product_class, v.action, *key, v.begin, v.end,
                    key in terminal,
                )
                for position, (v, key) in enumerate(
                    zip(item.alert.vtec, item.facts.keys, strict=True)
                )
            ]  # fmt: skip
        queue = [
            (real[e["alert_id"]], e["event_code"], e["queued_at"], e["state"], e["reason"])
            for e in self.queue
        ]
        for table, columns, rows in (
            (cap_alert_geocodes, GEOCODE_COLUMNS, geocodes),
            (cap_alert_refs, REF_COLUMNS, refs),
            (cap_alert_vtec, VTEC_COLUMNS, vtec),
            (_queue, QUEUE_COLUMNS, queue),
        ):
            if not rows:
                continue
            if native_writes(self.conn):
                row_insert(table.name, columns, self.conn.dialect).many(self.conn, rows)
            else:
                dicts = [dict(zip(columns, row, strict=True)) for row in rows]
                self.conn.execute(INSERT_CHILDREN[table.name], dicts)


def _real(alert_id: int | None, real: dict[int, int]) -> int | None:
    if alert_id is None:
        return None
    return real.get(alert_id, alert_id)


def _no_code(states: dict[int, dict[str, CodeState]]) -> set[str]:
    """The placeholder code, when a codeless member of the event is live."""
    live = any(
        s.state == lifecycle.ACTIVE
        for codes in states.values()
        for code, s in codes.items()
        if code == lifecycle.NO_CODE
    )
    return {lifecycle.NO_CODE} if live else set()


def document_codes(alerts: Sequence[Alert]) -> list[list[int]]:
    """Return each alert's valid code ids, SAME then UGC, in document order, each once."""
    lists = [[*alert.same_codes, *alert.ugc_codes] for alert in alerts]
    flat, offsets = encode_geocode_lists(lists)
    ids, bounds = flat.tolist(), offsets.tolist()
    return [list(dict.fromkeys(ids[bounds[i] : bounds[i + 1]])) for i in range(len(alerts))]


def ingest_batch(
    conn: Connection,
    alerts: Sequence[Alert],
    matchers: Matchers | None,
    *,
    explicit: bool = False,
    now: datetime | None = None,
    poll_source_id: int | None = None,
) -> list[IngestResult]:
    """Ingest alerts in order inside the caller's transaction.

    ``poll_source_id`` is the poll source that fetched them (stored with each new alert; the
    forwarding rules' ``poll:<id>``), None for an import.

    ``matchers`` None means those of the settings stored now (``current_matchers``), read in the
    same statement as the batch's first reads.

    A sender or identifier longer than ``store.MAX_KEY_CHARS`` is a ValueError and nothing is
    written (``import_bodies`` checks them first and reports such a message as a problem).
    """
    now = now or utcnow()
    for alert in alerts:
        _check_keys(alert)
    if not alerts:
        return []
    batch = _Batch(conn, alerts, now, settings=matchers is None)
    batch.poll_source_id = poll_source_id
    if matchers is None:
        key = batch.settings_key
        matchers = current_matchers(conn) if key is None else matchers_for(conn, key)
    done = [
        batch.ingest(alert, matchers, explicit=explicit, code_ids=ids)
        for alert, ids in zip(alerts, document_codes(alerts), strict=True)
    ]
    real = batch.write()
    _notify_in_area(conn, alerts, [(d[0], d[4]) for d in done], now)
    # A message's final state may differ from the one at its turn (a later one of the batch
    # ended it); the result reports the state at its turn, as one message per batch would.
    return [
        IngestResult(
            alert.identifier,
            outcome,
            real.get(alert_id, alert_id) if alert_id is not None else None,
            state,
            queued=queued,
            in_area=in_area,
        )
        for alert, (outcome, alert_id, state, queued, in_area) in zip(alerts, done, strict=True)
    ]


def _notify_in_area(
    conn: Connection, alerts: Sequence[Alert], done: Sequence[tuple[str, bool]], now: datetime
) -> None:
    """Write an ``alert_in_area`` notification for each new in-area alert of the batch."""
    fresh = [
        alert
        for alert, (outcome, in_area) in zip(alerts, done, strict=True)
        if outcome == "stored" and in_area and alert.msg_type != "Cancel"
    ]
    if not fresh or not has_subscribers(conn, ALERT_IN_AREA):
        return
    for alert in fresh:
        name = alert.event or alert.event_code or "Alert"
        lines = [alert.headline or name, f"Area: {alert.area_desc or ', '.join(alert.same_codes)}"]
        if alert.expires is not None:
            lines.append(f"Expires: {alert.expires.isoformat()}")
        lines += [text for text in (alert.description, alert.instruction) if text]
        lines.append(f"Sender: {alert.sender_name or alert.sender} ({alert.identifier})")
        notify(
            conn,
            ALERT_IN_AREA,
            subject=f"{name} in your area",
            body="\n\n".join(lines),
            now=now,
            dedupe_key=f"alert:{alert.sender}:{alert.identifier}"[:200],
        )


def ingest_alert(
    conn: Connection,
    alert: Alert,
    matchers: Matchers,
    *,
    explicit: bool = False,
    now: datetime | None = None,
) -> IngestResult:
    """Ingest one alert inside the caller's transaction (a batch of one)."""
    return ingest_batch(conn, [alert], matchers, explicit=explicit, now=now)[0]
