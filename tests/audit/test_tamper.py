"""Property: verify flags every tampered chain at the first affected row, and no untouched one.

Each example builds a random chain through the real writer, takes a checkpoint, then tampers
the way someone with database access but without the ledger key could: edit one field of a row,
delete a row, insert a forged or copied row (renumbering the rows after it), swap two rows, or
cut off the newest rows.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import GENESIS_HASH, AuditLedger
from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write
from tests.support import clear_tables

LEDGER = AuditLedger(secrets.token_urlsafe(48))
ATTACKER = AuditLedger("the attacker's own key, which is not the ledger key")
KINDS = ("edit", "delete", "insert", "swap", "truncate")
FIELDS = (
    "created_at",
    "user_id",
    "username",
    "client_ip",
    "user_agent",
    "action",
    "target",
    "details",
    "prev_hash",
    "row_hash",
)
SETTINGS = settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

texts = st.text(max_size=12)
entries = st.fixed_dictionaries(
    {
        "actor": st.builds(
            Actor,
            user_id=st.none() | st.integers(1, 2**31 - 1),
            username=st.none() | st.text(max_size=70),
            client_ip=st.none() | st.sampled_from(["192.0.2.1", "2001:db8::1", "::1"]),
            user_agent=st.none() | texts,
        ),
        "action": st.sampled_from(["login success", "login failure", "config.updated", "x"]),
        "target": st.none() | texts,
        "details": st.dictionaries(
            texts,
            st.integers(-(2**53), 2**53) | texts | st.lists(texts, max_size=3) | st.none(),
            max_size=3,
        ),
    }
)
chains = st.lists(entries, min_size=2, max_size=7)


def build_chain(engine: Engine, chain: list[dict[str, Any]]) -> str:
    """Write a fresh chain through the real writer and return its checkpoint."""
    with begin_write(engine) as conn:
        conn.execute(audit_logs.delete())
        for entry in chain:
            LEDGER.record(
                conn,
                entry["actor"],
                entry["action"],
                target=entry["target"],
                details=entry["details"],
                propagate=True,
            )
        return LEDGER.checkpoint(conn)


def all_rows(conn: Connection) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in conn.execute(select(audit_logs).order_by(audit_logs.c.id))]


def put(conn: Connection, row_id: int, values: dict[str, Any]) -> None:
    conn.execute(audit_logs.update().where(audit_logs.c.id == row_id).values(**values))


def changed(value: Any, field: str) -> Any:
    """Return a different value of the same kind that still fits the column."""
    if field == "created_at":
        return value + timedelta(microseconds=1)
    if field == "user_id":
        return value - 1 if value else 1
    if field in ("prev_hash", "row_hash"):
        return ("1" if value[0] == "0" else "0") + value[1:]
    if not value:
        return "tampered"
    return ("a" if value[0] != "a" else "b") + value[1:]


def edit(conn: Connection, data: st.DataObject, n: int) -> set[int]:
    row_id = data.draw(st.integers(1, n), label="row")
    field = data.draw(st.sampled_from(FIELDS), label="field")
    row = all_rows(conn)[row_id - 1]
    put(conn, row_id, {field: changed(row[field], field)})
    return {row_id}


def delete(conn: Connection, data: st.DataObject, n: int) -> set[int]:
    row_id = data.draw(st.integers(1, n), label="row")
    conn.execute(audit_logs.delete().where(audit_logs.c.id == row_id))
    return {row_id}


def insert(conn: Connection, data: st.DataObject, n: int) -> set[int]:
    position = data.draw(st.integers(1, n + 1), label="position")
    how = data.draw(st.sampled_from(["attacker-key", "random-hash", "copy"]), label="how")
    existing = all_rows(conn)
    for row in reversed(existing[position - 1 :]):  # make room, highest id first
        put(conn, row["id"], {"id": row["id"] + 1})
    prev = existing[position - 2]["row_hash"] if position > 1 else GENESIS_HASH
    if how == "copy":
        forged = dict(data.draw(st.sampled_from(existing), label="copied"), id=position)
        conn.execute(audit_logs.insert().values(**forged))
        # A copy of the row just before the gap is valid in place; the clash shows one row later.
        return {position, position + 1}
    forged = dict(existing[0], id=position, prev_hash=prev, action="forged", target="attacker")
    forged["row_hash"] = ATTACKER.sign(forged) if how == "attacker-key" else secrets.token_hex(32)
    conn.execute(audit_logs.insert().values(**forged))
    return {position}


def swap(conn: Connection, data: st.DataObject, n: int) -> set[int]:
    first = data.draw(st.integers(1, n - 1), label="first")
    second = data.draw(st.integers(first + 1, n), label="second")
    rows = all_rows(conn)
    a, b = rows[first - 1], rows[second - 1]
    put(conn, first, {k: v for k, v in b.items() if k != "id"})
    put(conn, second, {k: v for k, v in a.items() if k != "id"})
    return {first}


def truncate(conn: Connection, data: st.DataObject, n: int) -> set[int]:
    keep = data.draw(st.integers(0, n - 1), label="keep")
    conn.execute(audit_logs.delete().where(audit_logs.c.id > keep))
    return {keep + 1}


TAMPER = {"edit": edit, "delete": delete, "insert": insert, "swap": swap, "truncate": truncate}
WORDS = {
    "edit": ("modified",),
    "delete": ("missing", "cut off"),
    "insert": ("inserted", "out of order"),
    "swap": ("out of order",),
    "truncate": ("cut off",),
}


@SETTINGS
@given(chain=chains, kind=st.sampled_from(KINDS), data=st.data())
def test_every_tampering_is_flagged_at_the_first_affected_row(
    engine: Engine, chain: list[dict[str, Any]], kind: str, data: st.DataObject
) -> None:
    try:
        checkpoint = build_chain(engine, chain)
        with engine.begin() as conn:
            expected = TAMPER[kind](conn, data, len(chain))
        result = LEDGER.verify_now(engine, checkpoint)
        assert not result.ok, (kind, result)
        assert result.first_bad_id in expected, (kind, expected, result)
        assert any(word in result.problem for word in WORDS[kind]), (kind, result.problem)
        assert result.rows == result.first_bad_id - 1
        if kind == "truncate":
            # The limitation checkpoints exist for: a cut-off chain is still a valid chain.
            assert LEDGER.verify_now(engine).ok
        elif not (kind == "delete" and expected == {len(chain)}):
            assert not LEDGER.verify_now(engine).ok
    finally:
        clear_tables(engine)


@settings(max_examples=60, deadline=None, database=None)
@given(chain=st.lists(entries, max_size=7))
def test_an_untouched_chain_is_never_flagged(engine: Engine, chain: list[dict[str, Any]]) -> None:
    try:
        checkpoint = build_chain(engine, chain)
        assert LEDGER.verify_now(engine).summary() == f"ok {len(chain)} rows"
        assert LEDGER.verify_now(engine, checkpoint).ok
        # An older checkpoint still holds after more appends.
        LEDGER.record_now(engine, Actor.system(), "later", propagate=True)
        assert LEDGER.verify_now(engine, checkpoint).summary() == f"ok {len(chain) + 1} rows"
    finally:
        clear_tables(engine)
