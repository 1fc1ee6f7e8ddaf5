"""The reads of the batch ingest path, built once (the batch runs them for every chunk).

The first three reads (alerts by key, referrers of the batch's identifiers, members of the
batch's VTEC events) go as one ``UNION ALL`` statement; each row says by ``kind`` which read it
answers. On SQLite the key lists are bound as JSON text; small batches use a statement of fixed
shape (``fixed_reads``).
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import (
    Text,
    and_,
    bindparam,
    cast,
    exists,
    literal,
    literal_column,
    not_,
    null,
    or_,
    select,
    text,
    tuple_,
    union_all,
)

from alertstation.alerts.boundary.tables import BOUNDARY_ROW, station_boundary
from alertstation.alerts.store import ChainKey
from alertstation.alerts.tables import (
    alert_settings,
    cap_alert_geocodes,
    cap_alert_refs,
    cap_alert_vtec,
    cap_alerts,
    eas_forward_queue,
)

Key = tuple[str, str]
#: Most keys in one ``IN`` list (keeps SQLite's bound-parameter count low).
IN_CHUNK = 400

_V = cap_alert_vtec.c
_KEY_COLUMNS = (_V.office, _V.phenomenon, _V.significance, _V.etn, _V.year)
_A, _R = cap_alerts.c, cap_alert_refs.c
_IN = bindparam("keys", expanding=True)
_VX = cap_alert_vtec.alias("vx")
# Whether a referrer's references decide anything: only a message without VTEC (or with ROU
# only) supersedes or cancels what it references.
_DECIDES = not_(exists().where(_VX.c.alert_id == _R.alert_id, _VX.c.action != "ROU"))
# The reads, built once (the batch path runs them for every chunk, often of one message).
_BY_KEY = select(_A.id, _A.sender, _A.identifier, _A.state, _A.in_area).where(
    tuple_(_A.sender, _A.identifier).in_(_IN)
)
_REFERRERS = (
    select(
        _R.alert_id,
        _R.ref_sender,
        _R.ref_identifier,
        _A.msg_type,
        _A.sent,
        _DECIDES.label("decides"),
    )  # fmt: skip
    .join(cap_alerts, _A.id == _R.alert_id)
    .where(_R.ref_identifier.in_(_IN))
)
_CHAINS = (
    select(
        _V.alert_id,
        _A.identifier,
        _A.sent,
        _V.action,
        _A.state,
        _V.chain_terminal,
        *_KEY_COLUMNS,
    )  # fmt: skip
    .join(cap_alerts, _A.id == _V.alert_id)
    .where(tuple_(*_KEY_COLUMNS).in_(_IN))
)
_FACTS = select(
    _A.id, _A.sender, _A.identifier, _A.sent, _A.msg_type, _A.expires, _A.state,
    _A.cancelled_at, _A.in_area, _A.match_code, _A.match_geometry, _A.stored_area,
).where(_A.id.in_(_IN))  # fmt: skip
_G = cap_alert_geocodes.c
# The stored codes of alerts, in document order, with each code's state.
_CODES = (
    select(_G.alert_id, _G.code_id, _G.state, _G.ended_at, _G.ended_by)
    .where(_G.alert_id.in_(_IN))
    .order_by(_G.alert_id, _G.position)
)
_OWN_KEYS = (
    select(_V.alert_id, _V.action, *_KEY_COLUMNS)
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

    Each row says by ``kind`` (0, 1, 2) which of the three it answers (a chain row carries its
    ``chain_terminal`` in ``in_area``); with ``settings`` the
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
            _DECIDES, _A.msg_type, _A.sent, _null(_V.action), *_NO_KEYS,
        )
        .join(cap_alerts, _A.id == _R.alert_id)
        .where(idents),
    ]  # fmt: skip
    if chains is not None:
        parts.append(
            select(
                literal_column("2"), _V.alert_id, _null(_A.sender), _A.identifier,
                _A.state, _V.chain_terminal, _null(_A.msg_type), _A.sent, _V.action,
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
    # Keys of several columns as an OR of equalities: SQLite searches its index for each, where
    # a list of row values (``(a, b) IN ((?, ?), ...)``) made it scan the whole table.
    own_in = or_(
        *(
            and_(_A.sender == _param(f"o{i}s", _A.sender),
                 _A.identifier == _param(f"o{i}i", _A.identifier))
            for i in range(own)
        )
    )  # fmt: skip
    idents_in = _R.ref_identifier.in_([_param(f"d{i}", _R.ref_identifier) for i in range(idents)])
    chains_in = (
        or_(
            *(
                and_(*(c == _param(f"c{i}_{j}", c) for j, c in enumerate(_KEY_COLUMNS)))
                for i in range(chains)
            )
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


# -- the related reads: everything the rules read of stored alerts a batch can change ----------
#
# SQLite: one statement for the ids of those alerts (bound as one JSON text): their facts, VTEC
# keys, references and codes; the referrers of their identifiers; the members of their other
# VTEC events; the alerts they reference; their pending forward-queue entries. The codes of those
# other members are read apart (``_CODES``): they are rare. Each row says by ``kind`` which part
# it answers (``RELATED_*``); the columns are generic (texts t1-t6, times d1-d3, flags b1-b3,
# integers n1-n3).
RELATED_FACTS, RELATED_KEYS, RELATED_REFS, RELATED_CODES = 0, 1, 2, 3
RELATED_REFERRERS, RELATED_CHAINS, RELATED_TARGETS, RELATED_PENDING = 4, 5, 6, 7
_RELATED_SLOTS = {
    "t": (_A.state, 6),
    "d": (_A.sent, 3),
    "b": (_A.in_area, 3),
    "n": (_V.etn, 3),
}


def _related_row(kind: int, alert_id: Any, **values: Any) -> list[Any]:
    """The generic columns of one part of the related reads, NULL where the part has none."""
    columns = [literal_column(str(kind)).label("kind"), alert_id.label("id")]
    for prefix, (like, count) in _RELATED_SLOTS.items():
        for i in range(1, count + 1):
            name = f"{prefix}{i}"
            value = values.get(name)
            columns.append(
                cast(null(), like.type).label(name) if value is None else value.label(name)
            )
    return columns


def _related_reads(ids_in: Any) -> Any:
    """The related reads for alerts whose id satisfies ``ids_in(column)``."""
    g, q, vr = cap_alert_geocodes.c, eas_forward_queue.c, cap_alert_vtec.alias("vr")
    rr = cap_alert_refs.alias("rr")
    own_idents = select(_A.identifier).where(ids_in(_A.id)).scalar_subquery()
    other_keys = select(*(vr.c[c.name] for c in _KEY_COLUMNS)).where(ids_in(vr.c.alert_id))
    targets = select(rr.c.ref_sender, rr.c.ref_identifier).where(ids_in(rr.c.alert_id))
    parts = [
        select(
            *_related_row(
                RELATED_FACTS, _A.id, t1=_A.sender, t2=_A.identifier, t3=_A.msg_type,
                t4=_A.state, d1=_A.sent, d2=_A.expires, d3=_A.cancelled_at, b1=_A.in_area,
                b2=_A.match_code, b3=_A.match_geometry,
            )
        ).where(ids_in(_A.id)),
        select(
            *_related_row(
                RELATED_KEYS, _V.alert_id, t1=_V.action, t2=_V.office, t3=_V.phenomenon,
                t4=_V.significance, n1=_V.etn, n2=_V.year, n3=_V.position,
            )
        ).where(ids_in(_V.alert_id)),
        select(
            *_related_row(RELATED_REFS, _R.alert_id, t1=_R.ref_sender, t2=_R.ref_identifier)
        ).where(ids_in(_R.alert_id)),
        select(
            *_related_row(
                RELATED_CODES, g.alert_id, t1=g.state, d1=g.ended_at, n1=g.code_id,
                n2=g.ended_by, n3=g.position,
            )
        ).where(ids_in(g.alert_id)),
        select(
            *_related_row(
                RELATED_REFERRERS, _R.alert_id, t1=_R.ref_sender, t2=_R.ref_identifier,
                t3=_A.msg_type, d1=_A.sent, b1=_DECIDES,
            )
        )
        .join(cap_alerts, _A.id == _R.alert_id)
        .where(_R.ref_identifier.in_(own_idents)),
        select(
            *_related_row(
                RELATED_CHAINS, _V.alert_id, t1=_A.identifier, t2=_V.action, t3=_A.state,
                t4=_V.office, t5=_V.phenomenon, t6=_V.significance, d1=_A.sent, n1=_V.etn,
                n2=_V.year, b1=_V.chain_terminal,
            )
        )
        .join(cap_alerts, _A.id == _V.alert_id)
        .where(tuple_(*_KEY_COLUMNS).in_(other_keys)),
        select(
            *_related_row(
                RELATED_TARGETS, _A.id, t1=_A.sender, t2=_A.identifier, t3=_A.state,
                b1=_A.in_area,
            )
        ).where(tuple_(_A.sender, _A.identifier).in_(targets)),
        select(*_related_row(RELATED_PENDING, q.alert_id))
        .where(ids_in(q.alert_id), q.state == "pending")
        .distinct(),
    ]  # fmt: skip
    union = union_all(*parts).subquery()
    return select(union).order_by(union.c.kind, union.c.id, union.c.n3)


#: SQLite: the related reads with the ids as one JSON text. PostgreSQL runs the separate reads
#: above (``_FACTS`` to ``_CODES``): the subqueries of this one made it scan tables, and in the
#: ingest benchmark one message at a time took 12.3-14.5 s with it against 10.5 s without.
RELATED_JSON = _related_reads(lambda column: column.in_(_json_keys("ids", 0)))
