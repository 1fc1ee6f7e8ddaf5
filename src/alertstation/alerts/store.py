"""Store parsed alerts idempotently, drive their lifecycle, queue them for air, re-match them.

Every function here works inside the caller's transaction (open it with
``alertstation.db.engine.begin_write``) and bumps the generation ``alerts`` whenever it changes
``cap_alerts``, so a rolled-back ingest leaves neither rows nor a moved generation behind.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, insert, or_, select, tuple_, update

from alertstation.alerts import lifecycle
from alertstation.alerts.boundary.matching import AreaMatch, combine, touches_boundary
from alertstation.alerts.boundary.store import Boundary
from alertstation.alerts.lifecycle import ChainRow, Verdict
from alertstation.alerts.matching import GeocodeMatcher, encode_geocode_lists
from alertstation.alerts.model import Alert
from alertstation.alerts.tables import (
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.db import bump_generation
from alertstation.db.types import utcnow

GENERATION = "alerts"
#: Longest sender or identifier stored (the width of the key columns).
MAX_KEY_CHARS = 255
_EXPIRED = lifecycle.EXPIRED
_V = cap_alert_vtec.c
_KEY_COLUMNS = (_V.office, _V.phenomenon, _V.significance, _V.etn, _V.year)
ChainKey = tuple[str, str, str, int, int]


@dataclass(frozen=True)
class Matchers:
    """Hold what ingest matches against: broadcast area, storage area, forwarded events.

    With a station ``boundary``, alert polygons and circles are matched by geometry too; a
    geometry-only match counts as in area when ``match_polygons`` is on (docs/matching.md).
    """

    area: GeocodeMatcher
    storage: GeocodeMatcher
    forward_events: frozenset[str] | None = field(default_factory=frozenset)
    boundary: Boundary | None = None
    match_polygons: bool = False

    def classify(self, alert: Alert, geocodes: Sequence[str]) -> AreaMatch:
        """Return why the alert matches (code, geometry) and its in-area and stored flags."""
        return combine(
            by_code=self.area.matches(geocodes),
            by_geometry=touches_boundary(self.boundary, alert),
            in_storage=self.storage.matches(geocodes),
            match_polygons=self.match_polygons,
        )


@dataclass(frozen=True, slots=True)
class IngestResult:
    """Tell what ingest did with one alert: ``stored``, ``duplicate`` or ``ignored``."""

    identifier: str
    outcome: str
    alert_id: int | None = None
    state: str | None = None
    queued: bool = False
    in_area: bool = False


def ingest_alert(
    conn: Connection,
    alert: Alert,
    matchers: Matchers,
    *,
    explicit: bool = False,
    now: datetime | None = None,
) -> IngestResult:
    """Store one alert unless already stored, recompute the states it touches, queue it.

    The alert is stored when it matches the storage or broadcast area, when it concerns an
    alert already stored (a reference either way, or a shared VTEC chain), or when
    ``explicit`` (an operator's import: kept even out of area, flagged so). The outcome of
    the signature check (``alert.signature``) is stored with it; a duplicate keeps the first
    copy's. A sender or identifier longer than ``MAX_KEY_CHARS`` is a ValueError and nothing
    is written.
    """
    now = now or utcnow()
    _check_keys(alert)
    existing = conn.execute(
        select(cap_alerts.c.id, cap_alerts.c.state, cap_alerts.c.in_area).where(
            cap_alerts.c.sender == alert.sender, cap_alerts.c.identifier == alert.identifier
        )
    ).first()
    if existing is not None:
        return IngestResult(
            alert.identifier, "duplicate", existing.id, existing.state, in_area=existing.in_area
        )
    geocodes = sorted(alert.geocodes)
    match = matchers.classify(alert, geocodes)
    in_area, stored_area = match.in_area, match.stored_area
    keys = [vtec.event_key(alert.sent) for vtec in alert.vtec]
    related = _related_ids(conn, alert, keys)
    if not (explicit or stored_area or related):
        return IngestResult(alert.identifier, "ignored")
    alert_id = _insert(conn, alert, geocodes, keys, match, explicit, now)
    recompute_states(conn, {alert_id, *related}, now=now)
    state = conn.execute(select(cap_alerts.c.state).where(cap_alerts.c.id == alert_id)).scalar_one()
    refusal = lifecycle.forward_refusal(
        alert, state=state, in_area=in_area, events=matchers.forward_events
    )
    if not refusal:
        conn.execute(
            insert(eas_forward_queue).values(
                alert_id=alert_id,
                event_code=alert.event_code,
                queued_at=now,
                state="pending",
                reason="",
            )
        )
    bump_generation(conn, GENERATION)
    return IngestResult(
        alert.identifier, "stored", alert_id, state, queued=not refusal, in_area=in_area
    )


def _check_keys(alert: Alert) -> None:
    """Raise ValueError when a sender or identifier (own or referenced) is too long to store."""
    names = [alert.sender, alert.identifier]
    names += [part for ref in alert.references for part in (ref.sender, ref.identifier)]
    for name in names:
        if len(name) > MAX_KEY_CHARS:
            raise ValueError(
                f"sender or identifier {name[:40]!r}... is {len(name)} characters, "
                f"over the limit of {MAX_KEY_CHARS}"
            )


def _related_ids(conn: Connection, alert: Alert, keys: Sequence[ChainKey]) -> set[int]:
    """Return stored alerts this one references, that reference it, or that share a chain."""
    a = cap_alerts.c
    found: set[int] = set()
    if alert.references:
        wanted = [
            and_(a.sender == r.sender, a.identifier == r.identifier) for r in alert.references
        ]
        found.update(conn.execute(select(a.id).where(or_(*wanted))).scalars())
    found.update(
        conn.execute(
            select(cap_alert_refs.c.alert_id).where(
                cap_alert_refs.c.ref_sender == alert.sender,
                cap_alert_refs.c.ref_identifier == alert.identifier,
            )
        ).scalars()
    )
    if keys:
        found.update(
            conn.execute(select(_V.alert_id).where(tuple_(*_KEY_COLUMNS).in_(keys))).scalars()
        )
    return found


def _insert(
    conn: Connection,
    alert: Alert,
    geocodes: list[str],
    keys: Sequence[ChainKey],
    match: AreaMatch,
    explicit: bool,
    now: datetime,
) -> int:
    values: dict[str, Any] = {
        name: getattr(alert, name)
        for name in (
            "sender", "identifier", "sent", "source", "status", "msg_type", "event",
            "event_code", "severity", "urgency", "certainty", "headline", "area_desc",
            "effective", "onset", "expires", "ends", "raw",
        )
    }  # fmt: skip
    result = conn.execute(
        insert(cap_alerts).values(
            **values,
            state=lifecycle.ACTIVE,
            signature_status=alert.signature.status,
            signature_reason=alert.signature.reason,
            in_area=match.in_area,
            stored_area=match.stored_area,
            match_code=match.by_code,
            match_geometry=match.by_geometry,
            explicit=explicit,
            received_at=now,
            updated_at=now,
        )
    )
    alert_id = int(result.inserted_primary_key[0])
    flat, _offsets = encode_geocode_lists([geocodes])
    code_ids = sorted({int(code) for code in flat})
    if code_ids:
        conn.execute(
            insert(cap_alert_geocodes), [{"alert_id": alert_id, "code_id": c} for c in code_ids]
        )
    refs = {(r.sender, r.identifier): r.sent for r in alert.references}
    if refs:
        conn.execute(
            insert(cap_alert_refs),
            [
                {"alert_id": alert_id, "ref_sender": s, "ref_identifier": i, "ref_sent": t}
                for (s, i), t in refs.items()
            ],
        )
    if alert.vtec:
        rows = [
            {
                "alert_id": alert_id,
                "position": position,
                "product_class": vtec.product_class,
                "action": vtec.action,
                "office": key[0],
                "phenomenon": key[1],
                "significance": key[2],
                "etn": key[3],
                "year": key[4],
                "begin": vtec.begin,
                "end": vtec.end,
            }
            for position, (vtec, key) in enumerate(zip(alert.vtec, keys, strict=True))
        ]
        conn.execute(insert(cap_alert_vtec), rows)
    return alert_id


def recompute_states(conn: Connection, ids: Iterable[int], *, now: datetime) -> int:
    """Recompute the state of the given alerts from chains, references and ``now``.

    Writes only rows whose state or ``cancelled_at`` changed, marks ended chains terminal and
    skips still-pending forward-queue entries of alerts that are no longer active. Returns the
    number of alerts changed (the caller bumps the generation).
    """
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    a = cap_alerts.c
    facts = conn.execute(
        select(
            a.id, a.sender, a.identifier, a.sent, a.msg_type, a.expires, a.state, a.cancelled_at
        ).where(a.id.in_(wanted))
    ).all()
    roles, in_ended_chain = _chain_roles(conn, wanted)
    referrers = _referrers(conn, facts)
    changes: list[dict[str, Any]] = []
    for row in facts:
        updated, cancelled_by = referrers.get((row.sender, row.identifier), (False, None))
        verdict = lifecycle.decide(
            msg_type=row.msg_type,
            sent=row.sent,
            expires=row.expires,
            vtec=lifecycle.combine_roles(roles.get(row.id, ())),
            updated=updated,
            cancelled_by=cancelled_by,
            now=now,
        )
        if (verdict.state, verdict.cancelled_at) != (row.state, row.cancelled_at):
            changes.append(
                {
                    "b_id": row.id,
                    "state": verdict.state,
                    "cancelled_at": verdict.cancelled_at,
                    "updated_at": now,
                }
            )
    if changes:
        conn.execute(
            update(cap_alerts).where(a.id == bindparam("b_id")),
            changes,
        )
        ended = [
            c["b_id"]
            for c in changes
            if c["state"] in (lifecycle.CANCELLED, _EXPIRED)
            or (c["state"] != lifecycle.ACTIVE and c["b_id"] in in_ended_chain)
        ]
        _skip_ended(conn, ended, "event ended before it aired")
    return len(changes)


def _chain_roles(conn: Connection, ids: Sequence[int]) -> tuple[dict[int, list[Verdict]], set[int]]:
    """Return each alert's verdicts over its chains and the members of ended chains.

    Ended chains are marked terminal on the way.
    """
    own = conn.execute(select(_V.alert_id, *_KEY_COLUMNS).where(_V.alert_id.in_(ids))).all()
    keys = {tuple(row[1:]) for row in own}
    if not keys:
        return {}, set()
    members: dict[ChainKey, list[ChainRow]] = defaultdict(list)
    rows = conn.execute(
        select(_V.alert_id, cap_alerts.c.sent, _V.action, *_KEY_COLUMNS)
        .join(cap_alerts, cap_alerts.c.id == _V.alert_id)
        .where(tuple_(*_KEY_COLUMNS).in_(sorted(keys)))
    ).all()
    for row in rows:
        members[tuple(row[3:])].append(ChainRow(row.alert_id, row.sent, row.action))
    verdicts = {key: lifecycle.chain_verdicts(chain) for key, chain in members.items()}
    terminal = sorted(k for k, chain in members.items() if lifecycle.chain_is_terminal(chain))
    if terminal:
        conn.execute(
            update(cap_alert_vtec)
            .where(tuple_(*_KEY_COLUMNS).in_(terminal), _V.chain_terminal.is_(False))
            .values(chain_terminal=True)
        )
    roles: dict[int, list[Verdict]] = defaultdict(list)
    for row in own:
        roles[row.alert_id].append(verdicts[tuple(row[1:])][row.alert_id])
    ended = {row.alert_id for key in terminal for row in members[key]}
    return roles, ended


def _referrers(
    conn: Connection, facts: Sequence[Row[Any]]
) -> dict[tuple[str, str], tuple[bool, datetime | None]]:
    """Return, per (sender, identifier), whether an Update and when the first Cancel named it."""
    identifiers = sorted({row.identifier for row in facts})
    if not identifiers:
        return {}
    r = cap_alert_refs.c
    rows = conn.execute(
        select(r.ref_sender, r.ref_identifier, cap_alerts.c.msg_type, cap_alerts.c.sent)
        .join(cap_alerts, cap_alerts.c.id == r.alert_id)
        .where(r.ref_identifier.in_(identifiers))
    ).all()
    found: dict[tuple[str, str], tuple[bool, datetime | None]] = {}
    for row in rows:
        key = (row.ref_sender, row.ref_identifier)
        updated, cancelled = found.get(key, (False, None))
        if row.msg_type == "Cancel":
            cancelled = row.sent if cancelled is None else min(cancelled, row.sent)
        else:
            updated = True
        found[key] = (updated, cancelled)
    return found


def _skip_ended(conn: Connection, ended: Sequence[int], reason: str) -> None:
    """Skip pending queue entries of ended alerts and of what they continued.

    That is the ended alerts, the alerts they reference and every non-active member of
    their VTEC chains: a superseded NEW waits while its event is live, never after it ended.
    """
    if not ended:
        return
    a = cap_alerts.c
    r = cap_alert_refs.c
    referenced = (
        select(a.id)
        .join(cap_alert_refs, and_(a.sender == r.ref_sender, a.identifier == r.ref_identifier))
        .where(r.alert_id.in_(ended))
    )
    keys = select(*_KEY_COLUMNS).where(_V.alert_id.in_(ended))
    chained = (
        select(_V.alert_id)
        .join(cap_alerts, a.id == _V.alert_id)
        .where(tuple_(*_KEY_COLUMNS).in_(keys), a.state != lifecycle.ACTIVE)
    )
    ids = (
        set(ended) | set(conn.execute(referenced).scalars()) | set(conn.execute(chained).scalars())
    )
    _skip_pending(conn, sorted(ids), reason)


def _skip_pending(conn: Connection, alert_ids: Sequence[int], reason: str) -> None:
    if alert_ids:
        conn.execute(
            update(eas_forward_queue)
            .where(
                eas_forward_queue.c.alert_id.in_(alert_ids),
                eas_forward_queue.c.state == "pending",
            )
            .values(state="skipped", reason=reason)
        )


def expire_due(conn: Connection, *, now: datetime | None = None) -> int:
    """Mark active alerts whose ``expires`` has passed as expired; bump only on a change."""
    now = now or utcnow()
    a = cap_alerts.c
    due = list(
        conn.execute(
            select(a.id).where(
                a.state == lifecycle.ACTIVE, a.expires.is_not(None), a.expires <= now
            )
        ).scalars()
    )
    if not due:
        return 0
    conn.execute(
        update(cap_alerts).where(a.id.in_(due)).values(state=lifecycle.EXPIRED, updated_at=now)
    )
    _skip_ended(conn, due, "event ended before it aired")
    bump_generation(conn, GENERATION)
    return len(due)
