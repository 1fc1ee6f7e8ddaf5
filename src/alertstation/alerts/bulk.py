"""Ingest many parsed alerts in one transaction with a few statements (the batch path).

``ingest_batch`` gives exactly what calling ``store.ingest_alert`` once per alert, in order,
inside one transaction gives: the same outcomes and states per message, the same stored rows,
the same forward-queue entries and skips. It gets there by reading every stored row the batch
can touch in a handful of queries up front, replaying the per-message rules (duplicate check,
related alerts, state recompute, queueing, skipping) in memory in arrival order, and writing the
result at the end with multi-row inserts and a few updates. The ``alerts`` generation moves once
per batch (not once per stored message).

``import_bodies`` parses bodies (CAP XML, XML feeds, the JSON feed) and ingests their alerts in
chunks of ``CHUNK`` messages, one write transaction per chunk: a chunk is stored whole or not at
all. The poller, the upload route and ``alertstation alerts import`` all go through it (the
first two by way of ``import_messages``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import operator
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Text,
    bindparam,
    cast,
    insert,
    literal,
    literal_column,
    null,
    select,
    text,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.exc import DBAPIError

from alertstation import collector
from alertstation.alerts import lifecycle
from alertstation.alerts.boundary.tables import BOUNDARY_ROW, station_boundary
from alertstation.alerts.dispatch import parse_any
from alertstation.alerts.lifecycle import ChainRow, Verdict
from alertstation.alerts.matching import encode_geocode_lists
from alertstation.alerts.model import Alert, ParseProblem
from alertstation.alerts.parsing import AlertParseError
from alertstation.alerts.service import AlertSettings, ImportProblem, get_alert_settings
from alertstation.alerts.store import (
    GENERATION,
    ChainKey,
    IngestResult,
    Matchers,
    _check_keys,
)
from alertstation.alerts.tables import (
    alert_settings,
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)
from alertstation.alerts.trust import Trust, anchors_at, explain_unavailable
from alertstation.db.engine import begin_write
from alertstation.db.generations import touch_generation
from alertstation.db.types import utcnow

log = logging.getLogger(__name__)

#: Messages per write transaction. A chunk is all-or-nothing; a huge archive is several chunks.
CHUNK = 1000
#: Most keys in one ``IN`` list (keeps SQLite's bound-parameter count low).
_IN_CHUNK = 400
_SKIP_REASON = "event ended before it aired"
_ALERT_FIELDS = (
    "sender", "identifier", "sent", "source", "status", "msg_type", "event", "event_code",
    "severity", "urgency", "certainty", "headline", "area_desc", "effective", "onset",
    "expires", "ends", "raw",
)  # fmt: skip
_V = cap_alert_vtec.c
_KEY_COLUMNS = (_V.office, _V.phenomenon, _V.significance, _V.etn, _V.year)
_ID_BASE = 1 << 62  # provisional ids of new alerts: above every stored id, in arrival order
T = TypeVar("T")
_A, _R = cap_alerts.c, cap_alert_refs.c
_IN = bindparam("keys", expanding=True)
# The reads, built once (the batch path runs them for every chunk, often of one message).
_BY_KEY = select(_A.id, _A.sender, _A.identifier, _A.state, _A.in_area).where(
    tuple_(_A.sender, _A.identifier).in_(_IN)
)
_REFERRERS = (
    select(_R.alert_id, _R.ref_sender, _R.ref_identifier, _A.msg_type, _A.sent)
    .join(cap_alerts, _A.id == _R.alert_id)
    .where(_R.ref_identifier.in_(_IN))
)
_CHAINS = (
    select(_V.alert_id, _A.sent, _V.action, _A.state, *_KEY_COLUMNS)
    .join(cap_alerts, _A.id == _V.alert_id)
    .where(tuple_(*_KEY_COLUMNS).in_(_IN))
)
_FACTS = select(
    _A.id, _A.sender, _A.identifier, _A.sent, _A.msg_type, _A.expires, _A.state,
    _A.cancelled_at, _A.in_area,
).where(_A.id.in_(_IN))  # fmt: skip
_OWN_KEYS = (
    select(_V.alert_id, *_KEY_COLUMNS)
    .where(_V.alert_id.in_(_IN))
    .order_by(_V.alert_id, _V.position)
)
_REFS_OF = select(_R.alert_id, _R.ref_sender, _R.ref_identifier).where(_R.alert_id.in_(_IN))


def _null(column: Any) -> Any:
    return cast(null(), column.type).label(column.name)


_NO_KEYS = [_null(c) for c in _KEY_COLUMNS]
# What the settings of a chunk are made of, in one read: every settings row, and one row naming
# the station boundary's upload by its key columns (as load_boundary identifies it).
_S, _B = alert_settings.c, station_boundary.c
_BOUNDARY_KEY = (
    cast(_B.revision, Text) + "|" + cast(_B.uploaded_at, Text) + "|" + _B.name + "|"
    + cast(_B.vertex_count, Text) + "|" + cast(_B.min_lon, Text) + "|"
    + cast(_B.min_lat, Text) + "|" + cast(_B.max_lon, Text) + "|" + cast(_B.max_lat, Text)
)  # fmt: skip
_SETTINGS_KEY = union_all(
    select(_S.key, _S.value),
    select(literal("", Text), _BOUNDARY_KEY).where(_B.id == BOUNDARY_ROW),
)
# The rows of _SETTINGS_KEY as kind 3 (k1, k2), for the first reads to carry.
_NO_ALERT = (
    _null(_A.state), _null(_A.in_area), _null(_A.msg_type), _null(_A.sent), _null(_V.action),
    *_NO_KEYS,
)  # fmt: skip
_SETTINGS_ROWS = (
    select(literal_column("3"), _null(_A.id), _S.key, _S.value, *_NO_ALERT),
    select(literal_column("3"), _null(_A.id), literal("", Text), _BOUNDARY_KEY, *_NO_ALERT).where(
        _B.id == BOUNDARY_ROW
    ),
)


def _first_reads(own: Any, idents: Any, chains: Any | None, *, settings: bool) -> Any:
    """_BY_KEY, _REFERRERS and _CHAINS (for these conditions) in one statement.

    Each row says by ``kind`` (0, 1, 2) which of the three it answers; with ``settings`` the
    rows of _SETTINGS_KEY come too (kind 3). ``chains`` None leaves the chain read out.
    """
    parts = [
        select(
            literal_column("0").label("kind"), _A.id.label("id"), _A.sender.label("k1"),
            _A.identifier.label("k2"), _A.state.label("state"), _A.in_area.label("in_area"),
            _null(_A.msg_type), _null(_A.sent), _null(_V.action), *_NO_KEYS,
        ).where(own),
        select(
            literal_column("1"), _R.alert_id, _R.ref_sender, _R.ref_identifier, _null(_A.state),
            _null(_A.in_area), _A.msg_type, _A.sent, _null(_V.action), *_NO_KEYS,
        )
        .join(cap_alerts, _A.id == _R.alert_id)
        .where(idents),
    ]  # fmt: skip
    if chains is not None:
        parts.append(
            select(
                literal_column("2"), _V.alert_id, _null(_A.sender), _null(_A.identifier),
                _A.state, _null(_A.in_area), _null(_A.msg_type), _A.sent, _V.action,
                *_KEY_COLUMNS,
            )
            .join(cap_alerts, _A.id == _V.alert_id)
            .where(chains)
        )  # fmt: skip
    if settings:
        parts += _SETTINGS_ROWS
    return union_all(*parts)


_OWN_IN = tuple_(_A.sender, _A.identifier).in_(bindparam("own", expanding=True))
_IDENTS_IN = _R.ref_identifier.in_(bindparam("idents", expanding=True))
_CHAINS_IN = tuple_(*_KEY_COLUMNS).in_(bindparam("chains", expanding=True))
_FIRST_READS = _first_reads(_OWN_IN, _IDENTS_IN, _CHAINS_IN, settings=False)
_FIRST_READS_AND_SETTINGS = _first_reads(_OWN_IN, _IDENTS_IN, _CHAINS_IN, settings=True)
#: Batches with at most this many keys of each kind read with a statement of fixed shape (no
#: list expanded into the SQL on each run, which costs about as much as a small read).
_FIXED_KEYS = 8


def _json_keys(name: str, width: int) -> Any:
    """SQLite: the rows of a JSON array parameter ``name`` (of ``width``-long arrays, or of
    scalars when ``width`` is 0), for ``IN (SELECT ...)``. One bound text instead of a list
    of parameters rendered into the SQL on every run."""
    parts = ", ".join(f"json_extract(value, '$[{i}]')" for i in range(width)) or "value"
    return text(f"SELECT {parts} FROM json_each(:{name})")


#: Dialects whose first reads bind each key list as one JSON text (``_JSON_READS``).
_JSON_KEYS = ("sqlite",)
# On SQLite the first reads take each key list as one JSON text (any number of keys, one
# statement, compiled once): rendering an expanded IN list of 1,000 keys cost more than the read.
_JSON_READS = _first_reads(
    tuple_(_A.sender, _A.identifier).in_(_json_keys("own", 2)),
    _R.ref_identifier.in_(_json_keys("idents", 0)),
    tuple_(*_KEY_COLUMNS).in_(_json_keys("chains", len(_KEY_COLUMNS))),
    settings=False,
)
_JSON_READS_AND_SETTINGS = _first_reads(
    tuple_(_A.sender, _A.identifier).in_(_json_keys("own", 2)),
    _R.ref_identifier.in_(_json_keys("idents", 0)),
    tuple_(*_KEY_COLUMNS).in_(_json_keys("chains", len(_KEY_COLUMNS))),
    settings=True,
)


def _param(name: str, column: Any) -> Any:
    return bindparam(name, type_=column.type)


@functools.lru_cache(maxsize=256)
def _fixed_reads(own: int, idents: int, chains: int, settings: bool) -> Any:
    """The first reads for this many keys of each kind, with one parameter per key part."""
    own_in = tuple_(_A.sender, _A.identifier).in_(
        [tuple_(_param(f"o{i}s", _A.sender), _param(f"o{i}i", _A.identifier)) for i in range(own)]
    )
    idents_in = _R.ref_identifier.in_([_param(f"d{i}", _R.ref_identifier) for i in range(idents)])
    chains_in = (
        tuple_(*_KEY_COLUMNS).in_(
            [
                tuple_(*(_param(f"c{i}_{j}", c) for j, c in enumerate(_KEY_COLUMNS)))
                for i in range(chains)
            ]
        )
        if chains
        else None
    )
    return _first_reads(own_in, idents_in, chains_in, settings=settings)


def _fixed_params(own: list[Key], idents: list[str], chains: list[ChainKey]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for i, (sender, identifier) in enumerate(own):
        params[f"o{i}s"], params[f"o{i}i"] = sender, identifier
    for i, identifier in enumerate(idents):
        params[f"d{i}"] = identifier
    for i, key in enumerate(chains):
        for j, part in enumerate(key):
            params[f"c{i}_{j}"] = part
    return params


# The writes, built once (building an insert per chunk cost more than running it). The child
# rows' inserts are inline (no key read back): on PostgreSQL they run in _pipeline.
_INSERT_ALERTS = insert(cap_alerts).returning(_A.id, sort_by_parameter_order=True)
_UPDATE_STATES = update(cap_alerts).where(_A.id == bindparam("b_id"))
_INSERT_CHILDREN = {
    table.name: insert(table).inline()
    for table in (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue)
}
Key = tuple[str, str]

#: Rows per multi-row ``INSERT ... VALUES ... RETURNING`` of new alerts (their 28 columns stay
#: far under the bound-parameter limits of SQLite and PostgreSQL).
_ROWS_PER_INSERT = 500


class _RowInsert:
    """Insert rows given as tuples in ``columns`` order through the driver, bound as SQLAlchemy
    binds them.

    SQLAlchemy's executemany builds and processes a parameter dict per row; here each column's
    bind processor (the one SQLAlchemy itself would use on this dialect) runs once per distinct
    value, and the driver gets plain tuples. The stored values are the same as an ``insert()``
    of the same rows stores (``tests/alerts/test_bulk_writes.py`` compares them column by column).
    """

    def __init__(self, table: Any, columns: Sequence[str], dialect: Any) -> None:
        self._quote = quote = dialect.identifier_preparer.quote
        self._names = [quote(c) for c in columns]
        self.width = len(columns)
        self.mark = "?" if dialect.paramstyle == "qmark" else "%s"
        self.head = f"INSERT INTO {quote(table.name)} ({', '.join(self._names)}) "
        self.row = "(" + ", ".join([self.mark] * self.width) + ")"
        self.processors = [
            (i, processor)
            for i, name in enumerate(columns)
            for processor in [table.c[name].type.dialect_impl(dialect).bind_processor(dialect)]
            if processor is not None
        ]

    def bound(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows with every value passed through its column's bind processor."""
        if not self.processors:
            return rows
        columns = [list(column) for column in zip(*rows, strict=True)] if rows else []
        for i, processor in self.processors:
            # A batch repeats its times, flags and NULLs: each such value is bound once per
            # column (a bool is never looked up as the int equal to it: other types skip this).
            seen: dict[Any, Any] = {}
            values = columns[i]
            for j, value in enumerate(values):
                if value is None or type(value) in _BOUND_ONCE:
                    done = seen.get(value, _MISSING)
                    if done is _MISSING:
                        done = seen[value] = processor(value)
                    values[j] = done
                else:
                    values[j] = processor(value)
        return list(zip(*columns, strict=True))

    def many(self, conn: Connection, rows: list[tuple[Any, ...]]) -> None:
        """Insert ``rows`` with the driver's executemany."""
        if rows:
            conn.exec_driver_sql(f"{self.head}VALUES {self.row}", self.bound(rows))

    def returning_ids(
        self, conn: Connection, rows: list[tuple[Any, ...]], key: tuple[int, int]
    ) -> list[int]:
        """Insert ``rows`` in multi-row statements; return their new ids in row order.

        ``key`` names the positions of two text columns that tell the rows apart (an alert's
        sender and identifier, unique within a batch); each statement returns them with the id,
        so no order of returned rows is assumed.
        """
        first, second = key
        names = f"{self._quote('id')}, {self._names[first]}, {self._names[second]}"
        ids: list[int] = []
        bound = self.bound(rows)
        for start in range(0, len(bound), _ROWS_PER_INSERT):
            part = bound[start : start + _ROWS_PER_INSERT]
            sql = f"{self.head}VALUES {', '.join([self.row] * len(part))} RETURNING {names}"
            flat = tuple(chain.from_iterable(part))
            found = {(a, b): int(i) for i, a, b in conn.exec_driver_sql(sql, flat)}
            if len(found) != len(part):
                raise ValueError("rows of one insert share their key; cannot tell their ids")
            ids += [found[(row[first], row[second])] for row in part]
        return ids


_MISSING = object()
#: Value types ``_RowInsert.bound`` binds once per distinct value (immutable, hashable, and
#: never equal to a value of another type in the same column: a bool column holds bools).
_BOUND_ONCE = frozenset({datetime, bool})


@functools.lru_cache(maxsize=32)
def _row_insert(table_name: str, columns: tuple[str, ...], dialect: Any) -> _RowInsert:
    tables = {t.name: t for t in (cap_alerts, *_CHILD_TABLES)}
    return _RowInsert(tables[table_name], columns, dialect)


def _native_writes(conn: Connection) -> bool:
    """Tell whether rows can go through ``_RowInsert`` (a driver whose placeholders it knows)."""
    return conn.dialect.paramstyle in ("qmark", "format", "pyformat")


_CHILD_TABLES = (cap_alert_geocodes, cap_alert_refs, cap_alert_vtec, eas_forward_queue)
_ALERT_COLUMNS = (
    *_ALERT_FIELDS, "state", "cancelled_at", "signature_status", "signature_reason", "in_area",
    "stored_area", "match_code", "match_geometry", "explicit", "received_at", "updated_at",
)  # fmt: skip
_alert_fields = operator.attrgetter(*_ALERT_FIELDS)
_ALERT_KEY = (_ALERT_COLUMNS.index("sender"), _ALERT_COLUMNS.index("identifier"))
_GEOCODE_COLUMNS = ("alert_id", "code_id")
_REF_COLUMNS = ("alert_id", "ref_sender", "ref_identifier", "ref_sent")
_VTEC_COLUMNS = (
    "alert_id", "position", "product_class", "action", "office", "phenomenon", "significance",
    "etn", "year", "begin", "end", "chain_terminal",
)  # fmt: skip
_QUEUE_COLUMNS = ("alert_id", "event_code", "queued_at", "state", "reason")


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
    keys: list[ChainKey] = field(default_factory=list)  # one per VTEC row, in position order
    refs: list[Key] = field(default_factory=list)


@dataclass(slots=True)
class _New:
    """A new alert of the batch: its facts and the rows it will be stored with."""

    facts: _Facts
    alert: Alert
    code_ids: list[int]
    stored_area: bool
    explicit: bool
    match_code: bool = False
    match_geometry: bool = False


def _chunks(items: Sequence[T], size: int = _IN_CHUNK) -> Iterator[Sequence[T]]:
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
        self.by_key: dict[Key, int] = {}  # (sender, identifier) -> id, stored and new
        self.facts: dict[int, _Facts] = {}  # full facts: stored alerts that can change, and new
        self.state: dict[int, str] = {}  # current state of every known stored or new alert
        self.in_area: dict[int, bool] = {}
        self.chains: dict[ChainKey, list[ChainRow]] = defaultdict(list)
        self.referrers: dict[Key, list[tuple[int, str, datetime]]] = defaultdict(list)
        self.new: list[_New] = []
        self.changed: set[int] = set()  # stored alerts whose state or cancelled_at changed
        self.terminal: set[ChainKey] = set()  # chains found terminal by a recompute
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
        if self._json or max(len(own | refs), len(identifiers), len(keys)) <= _IN_CHUNK:
            related = self._load_first(own | refs, identifiers, keys)
        else:
            for row in self._rows(_BY_KEY, own | refs):
                self._know(row.id, row.sender, row.identifier, row.state, row.in_area)
            related = self._load_referrers(identifiers) | self._load_chains(keys)
        related |= {self.by_key[k] for k in refs if k in self.by_key}
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
            self.referrers[(row.k1, row.k2)].append((row.id, row.msg_type, row.sent))
            found.add(row.id)
        for row in rows[2]:
            key: ChainKey = (row.office, row.phenomenon, row.significance, row.etn, row.year)
            self.chains[key].append(ChainRow(row.id, row.sent, row.action))
            self.state.setdefault(row.id, row.state)
            found.add(row.id)
        return found

    def _load_related(self, related: set[int], keys: set[ChainKey], identifiers: set[str]) -> None:
        """Read the facts, chains, referrers and references of stored alerts that can change."""
        for row in self._rows(_FACTS, related):
            self._know(row.id, row.sender, row.identifier, row.state, row.in_area)
            self.facts[row.id] = _Facts(
                row.id, row.sender, row.identifier, row.sent, row.msg_type, row.expires,
                row.state, row.cancelled_at, row.in_area,
            )  # fmt: skip
        other_keys: set[ChainKey] = set()
        for row in self._rows(_OWN_KEYS, related):
            key: ChainKey = tuple(row[1:])  # type: ignore[assignment]
            self.facts[row.alert_id].keys.append(key)
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

    def _know(self, alert_id: int, sender: str, identifier: str, state: str, area: bool) -> None:
        self.by_key[(sender, identifier)] = alert_id
        self.state.setdefault(alert_id, state)
        self.in_area.setdefault(alert_id, area)

    def _load_referrers(self, identifiers: set[str]) -> set[int]:
        """Read who references these identifiers (referrer id, msg_type, sent)."""
        found: set[int] = set()
        for row in self._rows(_REFERRERS, identifiers):
            key = (row.ref_sender, row.ref_identifier)
            self.referrers[key].append((row.alert_id, row.msg_type, row.sent))
            found.add(row.alert_id)
        return found

    def _load_chains(self, keys: set[ChainKey]) -> set[int]:
        """Read every stored member of these chains (and its state); return the member ids."""
        found: set[int] = set()
        for row in self._rows(_CHAINS, keys):
            key: ChainKey = tuple(row[4:])  # type: ignore[assignment]
            self.chains[key].append(ChainRow(row.alert_id, row.sent, row.action))
            self.state.setdefault(row.alert_id, row.state)
            found.add(row.alert_id)
        return found

    # -- the per-message rules, in memory ------------------------------------------------------

    def ingest(
        self,
        alert: Alert,
        matchers: Matchers,
        *,
        explicit: bool,
        geocodes: list[str],
        code_ids: list[int],
    ) -> tuple[str, int | None, str | None, bool, bool]:
        """Apply one message: return (outcome, id, state, queued, in_area) as ingest_alert.

        ``geocodes`` are the alert's codes sorted, ``code_ids`` their stored ids (the batch
        encodes every alert's codes in one call).
        """
        existing = self.by_key.get((alert.sender, alert.identifier))
        if existing is not None:
            return "duplicate", existing, self.state[existing], False, self.in_area[existing]
        match = matchers.classify(alert, geocodes)
        in_area, stored_area = match.in_area, match.stored_area
        keys = [vtec.event_key(alert.sent) for vtec in alert.vtec]
        related = self._related(alert, keys)
        if not (explicit or stored_area or related):
            return "ignored", None, None, False, False
        alert_id = _ID_BASE + len(self.new)
        refs = list(dict.fromkeys((r.sender, r.identifier) for r in alert.references))
        facts = _Facts(
            alert_id, alert.sender, alert.identifier, alert.sent, alert.msg_type, alert.expires,
            lifecycle.ACTIVE, None, in_area, keys, refs,
        )  # fmt: skip
        codes = sorted(set(code_ids))
        self.new.append(
            _New(facts, alert, codes, stored_area, explicit, match.by_code, match.by_geometry)
        )
        self.facts[alert_id] = facts
        self._know(alert_id, alert.sender, alert.identifier, lifecycle.ACTIVE, in_area)
        for key, vtec in zip(keys, alert.vtec, strict=True):
            self.chains[key].append(ChainRow(alert_id, alert.sent, vtec.action))
        for ref in refs:
            self.referrers[ref].append((alert_id, alert.msg_type, alert.sent))
        self._recompute({alert_id, *related})
        state = facts.state
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
            found.update(row.alert_id for row in self.chains.get(key, ()))
        return found

    def _recompute(self, wanted: set[int]) -> None:
        """Mirror ``store.recompute_states`` for the given alerts."""
        own_keys = {key for alert_id in wanted for key in self.facts[alert_id].keys}
        verdicts: dict[ChainKey, dict[int, Verdict]] = {}
        ended_chain: set[int] = set()
        for key in own_keys:
            members = self.chains[key]
            verdicts[key] = lifecycle.chain_verdicts(members)
            if lifecycle.chain_is_terminal(members):
                self.terminal.add(key)
                ended_chain.update(row.alert_id for row in members)
        ended: list[int] = []
        for alert_id in sorted(wanted):
            facts = self.facts[alert_id]
            updated, cancelled_by = self._referred(facts)
            verdict = lifecycle.decide(
                msg_type=facts.msg_type,
                sent=facts.sent,
                expires=facts.expires,
                vtec=lifecycle.combine_roles(verdicts[key][alert_id] for key in facts.keys),
                updated=updated,
                cancelled_by=cancelled_by,
                now=self.now,
            )
            if (verdict.state, verdict.cancelled_at) == (facts.state, facts.cancelled_at):
                continue
            facts.state, facts.cancelled_at = verdict.state, verdict.cancelled_at
            self.state[alert_id] = verdict.state
            if alert_id < _ID_BASE:
                self.changed.add(alert_id)
            if verdict.state in (lifecycle.CANCELLED, lifecycle.EXPIRED) or (
                verdict.state != lifecycle.ACTIVE and alert_id in ended_chain
            ):
                ended.append(alert_id)
        if ended:
            self._skip_ended(ended)

    def _referred(self, facts: _Facts) -> tuple[bool, datetime | None]:
        updated, cancelled = False, None
        for _referrer, msg_type, sent in self.referrers.get((facts.sender, facts.identifier), ()):
            if msg_type == "Cancel":
                cancelled = sent if cancelled is None else min(cancelled, sent)
            else:
                updated = True
        return updated, cancelled

    def _skip_ended(self, ended: Sequence[int]) -> None:
        """Mirror ``store._skip_ended``: skip pending entries of ended alerts and their kin."""
        ids = set(ended)
        for alert_id in ended:
            ids.update(self.by_key[k] for k in self.facts[alert_id].refs if k in self.by_key)
            for key in self.facts[alert_id].keys:
                ids.update(
                    row.alert_id
                    for row in self.chains[key]
                    if self.state[row.alert_id] != lifecycle.ACTIVE
                )
        for alert_id in ids:
            if alert_id >= _ID_BASE:
                entry = self.queued.get(alert_id)
                if entry is not None and entry["state"] == "pending":
                    entry.update(state="skipped", reason=_SKIP_REASON)
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
                    *_alert_fields(item.alert),
                    item.facts.state, item.facts.cancelled_at, item.alert.signature.status,
                    item.alert.signature.reason, item.facts.in_area, item.stored_area,
                    item.match_code, item.match_geometry, item.explicit, now, now,
                )
                for item in self.new
            ]  # fmt: skip
            if _native_writes(conn):
                writer = _row_insert(cap_alerts.name, _ALERT_COLUMNS, conn.dialect)
                ids: Iterable[int] = writer.returning_ids(conn, rows, _ALERT_KEY)
            else:
                dicts = [dict(zip(_ALERT_COLUMNS, row, strict=True)) for row in rows]
                ids = conn.execute(_INSERT_ALERTS, dicts).scalars()
            real = {item.facts.id: int(i) for item, i in zip(self.new, ids, strict=True)}
        with _pipeline(conn):
            self._write_rest(real)
            if self.new:
                touch_generation(conn, GENERATION)
        return real

    def _write_rest(self, real: dict[int, int]) -> None:
        conn, now = self.conn, self.now
        if self.changed:
            conn.execute(
                _UPDATE_STATES,
                [
                    {
                        "b_id": i,
                        "state": self.facts[i].state,
                        "cancelled_at": self.facts[i].cancelled_at,
                        "updated_at": now,
                    }
                    for i in sorted(self.changed)
                ],
            )
        for part in _chunks(sorted(self.terminal)):
            conn.execute(
                update(cap_alert_vtec)
                .where(tuple_(*_KEY_COLUMNS).in_(part), _V.chain_terminal.is_(False))
                .values(chain_terminal=True)
            )
        self._insert_children(real)
        for part in _chunks(sorted(self.skip_stored)):
            conn.execute(
                update(eas_forward_queue)
                .where(
                    eas_forward_queue.c.alert_id.in_(part),
                    eas_forward_queue.c.state == "pending",
                )
                .values(state="skipped", reason=_SKIP_REASON)
            )

    def _insert_children(self, real: dict[int, int]) -> None:
        geocodes: list[tuple[Any, ...]] = []
        refs: list[tuple[Any, ...]] = []
        vtec: list[tuple[Any, ...]] = []
        terminal = self.terminal
        for item in self.new:
            alert_id = real[item.facts.id]
            geocodes += [(alert_id, c) for c in item.code_ids]
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
            (cap_alert_geocodes, _GEOCODE_COLUMNS, geocodes),
            (cap_alert_refs, _REF_COLUMNS, refs),
            (cap_alert_vtec, _VTEC_COLUMNS, vtec),
            (eas_forward_queue, _QUEUE_COLUMNS, queue),
        ):
            if not rows:
                continue
            if _native_writes(self.conn):
                _row_insert(table.name, columns, self.conn.dialect).many(self.conn, rows)
            else:
                dicts = [dict(zip(columns, row, strict=True)) for row in rows]
                self.conn.execute(_INSERT_CHILDREN[table.name], dicts)


@contextlib.contextmanager
def _pipeline(conn: Connection) -> Iterator[None]:
    """On PostgreSQL, send the statements run inside in one round trip (psycopg's pipeline).

    Only for statements whose results are not read: the server answers them at the end of the
    block. An error found then is raised as SQLAlchemy's error for it, as ``execute`` would.
    """
    driver = conn.connection.driver_connection if conn.dialect.name == "postgresql" else None
    if driver is None or not _pipeline_supported():
        yield
        return
    import psycopg

    try:
        with driver.pipeline():
            yield
    except psycopg.Error as ex:
        raise DBAPIError.instance(None, None, ex, psycopg.Error) from ex


@functools.cache
def _pipeline_supported() -> bool:
    import psycopg

    return bool(psycopg.Pipeline.is_supported())


def ingest_batch(
    conn: Connection,
    alerts: Sequence[Alert],
    matchers: Matchers | None,
    *,
    explicit: bool = False,
    now: datetime | None = None,
) -> list[IngestResult]:
    """Ingest alerts in order inside the caller's transaction, as ingest_alert once per alert.

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
    if matchers is None:
        key = batch.settings_key
        matchers = current_matchers(conn) if key is None else _matchers_for(conn, key)
    geocodes = [sorted(alert.geocodes) for alert in alerts]
    flat, offsets = encode_geocode_lists(geocodes)
    ids, bounds = flat.tolist(), offsets.tolist()
    done = [
        batch.ingest(
            alert,
            matchers,
            explicit=explicit,
            geocodes=codes,
            code_ids=ids[bounds[i] : bounds[i + 1]],
        )
        for i, (alert, codes) in enumerate(zip(alerts, geocodes, strict=True))
    ]
    real = batch.write()
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


Item = IngestResult | ImportProblem


def parse_body(
    data: bytes, source: str, *, now: datetime | None = None, trust: Trust = None
) -> list[Alert | ImportProblem]:
    """Parse one body into alerts and the problems of the entries that could not be used."""
    try:
        parsed = parse_any(data, trust=anchors_at(trust, now))
    except AlertParseError as ex:
        log.warning("alert import: skipped %s: %s", source, ex)
        return [ImportProblem(source, str(ex))]
    items: list[Alert | ImportProblem] = []
    for item in parsed:
        if isinstance(item, ParseProblem):
            where = f"{source} entry {item.position}"
            if item.identifier:
                where += f" ({item.identifier})"
            log.warning("alert import: skipped %s: %s", where, item.reason)
            items.append(ImportProblem(where, item.reason, link=item.link))
            continue
        alert = explain_unavailable(item, trust)
        try:
            _check_keys(alert)
        except ValueError as ex:
            where = f"{source} ({alert.identifier[:80]})"
            log.warning("alert import: skipped %s: %s", where, ex)
            items.append(ImportProblem(where, str(ex)))
            continue
        items.append(alert)
    return items


@functools.lru_cache(maxsize=8)
def _matchers(settings: AlertSettings) -> Matchers:
    """Build the matchers of these settings once (they are immutable and thread-safe)."""
    return settings.matchers()


_settings_lock = threading.Lock()
_matchers_by_key: dict[tuple[Any, ...], Matchers] = {}


def current_matchers(conn: Connection) -> Matchers:
    """Return the matchers of the settings stored now, read inside the caller's transaction.

    One read gives the stored settings rows and the key columns of the boundary's upload; when
    they are the ones seen last, their matchers are reused without parsing the settings again.
    Otherwise the settings are read in full (``get_alert_settings``). The key is the stored
    values themselves, so another database (a restore, a test) never gets stale matchers.
    """
    return _matchers_for(conn, tuple(sorted(tuple(row) for row in conn.execute(_SETTINGS_KEY))))


def _matchers_for(conn: Connection, key: tuple[Any, ...]) -> Matchers:
    """Return the matchers of the settings ``key`` (_SETTINGS_KEY's rows) names."""
    found = _matchers_by_key.get(key)
    if found is not None:
        return found
    matchers = _matchers(get_alert_settings(conn))
    with _settings_lock:
        if len(_matchers_by_key) >= 8:
            _matchers_by_key.clear()
        _matchers_by_key[key] = matchers
    return matchers


def ingest_items(
    engine: Engine,
    items: Sequence[Alert | ImportProblem],
    *,
    explicit: bool,
    now: datetime | None = None,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> list[Item]:
    """Ingest the alerts among ``items`` in chunks, one write transaction per chunk.

    Problems pass through in place. ``progress`` is called with the number of messages done
    after each chunk.
    """
    results: list[Item | None] = [
        item if isinstance(item, ImportProblem) else None for item in items
    ]
    positions = [i for i, item in enumerate(items) if not isinstance(item, ImportProblem)]
    for part in _chunks(positions, max(1, chunk)):
        alerts = [items[i] for i in part]
        with collector.paused(), begin_write(engine) as conn:
            done = ingest_batch(conn, alerts, None, explicit=explicit, now=now)  # type: ignore[arg-type]
        for i, result in zip(part, done, strict=True):
            results[i] = result
        if progress is not None:
            progress(len(part))
    return [r for r in results if r is not None]


def import_bodies(
    engine: Engine,
    bodies: Iterable[tuple[bytes, str]],
    *,
    explicit: bool = True,
    now: datetime | None = None,
    trust: Trust = None,
    chunk: int = CHUNK,
) -> list[Item]:
    """Parse every (body, source) and ingest all their alerts in chunks of ``chunk``.

    The cyclic collector is paused for the whole call (``alertstation.collector``): every parsed
    alert stays alive until its chunk is written, so its passes would find nothing to free.
    """
    items: list[Alert | ImportProblem] = []
    with collector.paused():
        for data, source in bodies:
            items += parse_body(data, source, now=now, trust=trust)
        return ingest_items(engine, items, explicit=explicit, now=now, chunk=chunk)


def import_messages(
    engine: Engine,
    data: bytes,
    source: str,
    *,
    explicit: bool = True,
    now: datetime | None = None,
    trust: Trust = None,
) -> list[IngestResult | ImportProblem]:
    """Parse one file or body (CAP XML, XML feed or JSON feed) and ingest every alert in it.

    The alerts go through the batch path (``import_bodies``): one write transaction per chunk of
    ``CHUNK`` messages, all-or-nothing per chunk. A body that cannot be parsed, one entry
    of a feed that cannot, or an alert whose sender or identifier is too long to store, is
    logged with its source and reported as an ImportProblem; the rest is stored.

    ``trust`` is what signatures are checked against (``alerts.trust.trust_for(settings)``):
    anchors, checked at ``now`` when given (the time of receipt) unless they carry their own
    time; ``None`` (no anchors configured: a signed message is recorded failed, never
    verified); or a ``TrustUnavailable``, whose reason then replaces that failure's reason.
    """
    return import_bodies(engine, [(data, source)], explicit=explicit, now=now, trust=trust)


class ChunkedImport:
    """Collect parsed bodies and ingest their alerts a chunk at a time (``alerts import``).

    ``add`` takes one source's parsed items and returns the sources whose results are now
    known, in the order they were added, each with its results; ``flush`` ingests the rest.
    Each chunk of ``chunk`` alerts (default ``CHUNK``) is one write transaction; a source's
    alerts share a chunk unless they overflow it. ``progress(count)`` is called with the
    alerts done per chunk.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        explicit: bool = True,
        chunk: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self._engine = engine
        self._explicit = explicit
        self._chunk = max(1, chunk or CHUNK)
        self._progress = progress
        self._pending: list[tuple[str, list[Alert | ImportProblem]]] = []
        self._alerts = 0

    def add(self, source: str, items: list[Alert | ImportProblem]) -> list[tuple[str, list[Item]]]:
        """Queue one source's items; ingest and return what is due once a chunk is full."""
        self._pending.append((source, items))
        self._alerts += sum(1 for item in items if not isinstance(item, ImportProblem))
        return self.flush() if self._alerts >= self._chunk else []

    def flush(self) -> list[tuple[str, list[Item]]]:
        """Ingest everything queued; return each source with its results."""
        pending, self._pending, self._alerts = self._pending, [], 0
        if not pending:
            return []
        flat = [item for _source, items in pending for item in items]
        results = ingest_items(
            self._engine,
            flat,
            explicit=self._explicit,
            chunk=self._chunk,
            progress=self._progress,
        )
        done, start = [], 0
        for source, items in pending:
            done.append((source, results[start : start + len(items)]))
            start += len(items)
        return done
