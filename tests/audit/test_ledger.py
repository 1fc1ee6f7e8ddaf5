"""The ledger writer: chaining, the savepoint, swallow vs propagate, config.updated, checkpoints."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from sqlalchemy import Connection, Engine, select
from sqlalchemy.exc import SQLAlchemyError

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import (
    CONFIG_UPDATED,
    GENESIS_HASH,
    AuditLedger,
    canonical_bytes,
    changed_field_names,
)
from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write, make_engine
from alertstation.db.engine import is_outage
from alertstation.errors import AppError

ALICE = Actor(user_id=7, username="alice", client_ip="203.0.113.9", user_agent="Firefox/128")


def rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        result = conn.execute(select(audit_logs).order_by(audit_logs.c.id))
        return [dict(row._mapping) for row in result]


def test_rows_are_chained_from_genesis_with_dense_ids(db: Engine, ledger: AuditLedger) -> None:
    with begin_write(db) as conn:
        ids = [ledger.record(conn, ALICE, "login success", target="alice") for _ in range(3)]
    assert ids == [1, 2, 3]
    stored = rows(db)
    assert stored[0]["prev_hash"] == GENESIS_HASH
    assert [r["prev_hash"] for r in stored[1:]] == [r["row_hash"] for r in stored[:-1]]
    assert stored[0]["username"] == "alice" and stored[0]["client_ip"] == "203.0.113.9"
    assert stored[0]["user_agent"] == "Firefox/128" and stored[0]["details"] == "{}"
    assert stored[0]["created_at"].tzinfo is not None
    assert ledger.verify_now(db).summary() == "ok 3 rows"


def test_canonical_encoding_is_sorted_json_with_microseconds(
    db: Engine, ledger: AuditLedger
) -> None:
    ledger.record_now(db, ALICE, "config.updated", target="smtp", details={"b": 1, "a": [2]})
    row = rows(db)[0]
    assert row["details"] == '{"a":[2],"b":1}'
    encoded = orjson.loads(canonical_bytes(row))
    assert list(encoded) == sorted(encoded)
    assert encoded["id"] == 1 and encoded["v"] == 1
    assert encoded["created_at"].endswith("Z") and len(encoded["created_at"]) == 27
    assert ledger.sign(row) == row["row_hash"]


def test_long_values_are_cut_to_the_column_before_signing(db: Engine, ledger: AuditLedger) -> None:
    actor = Actor(1, "u" * 200, "a" * 60, "Agent " * 200)
    ledger.record_now(db, actor, "login failure", target="t" * 400, propagate=True)
    row = rows(db)[0]
    assert (len(row["username"]), len(row["client_ip"])) == (160, 45)
    assert (len(row["user_agent"]), len(row["target"])) == (512, 255)
    assert ledger.verify_now(db).ok


def test_a_rolled_back_caller_leaves_no_row_and_no_gap(db: Engine, ledger: AuditLedger) -> None:
    with pytest.raises(ZeroDivisionError), begin_write(db) as conn:
        ledger.record(conn, ALICE, "alert.deleted")
        raise ZeroDivisionError
    assert rows(db) == []
    assert ledger.record_now(db, ALICE, "alert.deleted") == 1
    assert ledger.verify_now(db).ok


def test_unserialisable_details_are_swallowed_and_logged_critical(
    db: Engine, ledger: AuditLedger, audit_log_records: list[logging.LogRecord]
) -> None:
    with begin_write(db) as conn:
        first = ledger.record(conn, ALICE, "eas.broadcast")
        failed = ledger.record(conn, ALICE, "eas.broadcast", details={"x": object()})
        third = ledger.record(conn, ALICE, "eas.broadcast")
    assert (first, failed, third) == (1, None, 2)
    assert [r.levelno for r in audit_log_records] == [logging.CRITICAL]
    assert audit_log_records[0].audit_action == "eas.broadcast"  # type: ignore[attr-defined]
    assert ledger.verify_now(db).summary() == "ok 2 rows"


def test_a_database_error_rolls_back_only_the_savepoint(
    db: Engine,
    ledger: AuditLedger,
    audit_log_records: list[logging.LogRecord],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_append = AuditLedger._append

    def broken_append(self: AuditLedger, conn: Connection, *args: Any) -> int:
        real_append(self, conn, *args)
        # On PostgreSQL this aborts the transaction; only the savepoint rollback saves it.
        conn.exec_driver_sql("SELECT * FROM no_such_table")
        raise AssertionError("unreachable")

    with begin_write(db) as conn:
        assert ledger.record(conn, ALICE, "before") == 1
        monkeypatch.setattr(AuditLedger, "_append", broken_append)
        assert ledger.record(conn, ALICE, "lost") is None
        monkeypatch.setattr(AuditLedger, "_append", real_append)
        assert ledger.record(conn, ALICE, "after") == 2
    assert [r["action"] for r in rows(db)] == ["before", "after"]
    assert len(audit_log_records) == 1 and audit_log_records[0].levelno == logging.CRITICAL
    assert ledger.verify_now(db).ok


def test_propagate_raises_and_the_caller_decides(db: Engine, ledger: AuditLedger) -> None:
    with begin_write(db) as conn:
        with pytest.raises(TypeError):
            ledger.record(conn, ALICE, "alert.deleted", details={"x": object()}, propagate=True)
        with pytest.raises(ValueError, match="action"):
            ledger.record(conn, ALICE, "", propagate=True)
        assert ledger.record(conn, ALICE, "alert.deleted", propagate=True) == 1
    assert ledger.verify_now(db).ok


def test_record_or_refuse_refuses_with_audit_failed_but_passes_an_outage_through(
    db: Engine, ledger: AuditLedger, dead_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SQLAlchemyError) as refused_connection:
        with dead_engine.connect():
            pass
    outage = refused_connection.value
    assert is_outage(outage)
    failures: list[Exception] = [TypeError("not serialisable"), outage]

    def broken(*args: Any, **kwargs: Any) -> None:
        raise failures.pop(0)

    monkeypatch.setattr(ledger, "record", broken)
    with begin_write(db) as conn:
        with pytest.raises(AppError) as refused:
            ledger.record_or_refuse(conn, ALICE, "alert.deleted", target="cap_alert:1")
        assert refused.value.code == "audit_failed" and refused.value.status == 500
        with pytest.raises(SQLAlchemyError) as passed:
            ledger.record_or_refuse(conn, ALICE, "alert.deleted", target="cap_alert:1")
        assert passed.value is outage  # answered 503 database_unavailable by the web tier


def test_record_now_swallows_a_missing_table(
    empty_database: str, ledger: AuditLedger, audit_log_records: list[logging.LogRecord]
) -> None:
    engine = make_engine(empty_database)
    try:
        assert ledger.record_now(engine, ALICE, "login failure") is None
        assert audit_log_records[-1].levelno == logging.CRITICAL
        with pytest.raises(Exception, match="audit_logs"):
            ledger.record_now(engine, ALICE, "login failure", propagate=True)
    finally:
        engine.dispose()


def test_an_unserialised_connection_is_a_programming_error(db: Engine, ledger: AuditLedger) -> None:
    with db.connect() as conn, pytest.raises(RuntimeError, match="transaction"):
        ledger.record(conn, ALICE, "login success")
    if db.dialect.name == "sqlite":
        with db.begin() as conn, pytest.raises(RuntimeError, match="begin_write"):
            ledger.record(conn, ALICE, "login success")
    assert rows(db) == []


def test_config_update_stores_field_names_never_values(db: Engine, ledger: AuditLedger) -> None:
    before = {"smtp_host": "mail.example", "smtp_password": "hunter2-old", "api_key": "k-1"}
    after = {**before, "smtp_host": "mx.example", "smtp_password": "s3cr3t-NEW", "tz": "UTC"}
    changed = changed_field_names(before, after)
    assert changed == ["smtp_host", "smtp_password", "tz"]
    with begin_write(db) as conn:
        ledger.record_config_update(conn, ALICE, "email", [*changed, "smtp_password"])
    row = rows(db)[0]
    assert (row["action"], row["target"]) == (CONFIG_UPDATED, "email")
    assert orjson.loads(row["details"]) == {"fields": ["smtp_host", "smtp_password", "tz"]}
    flat = repr(row)
    for secret in ("hunter2-old", "s3cr3t-NEW", "mx.example", "mail.example"):
        assert secret not in flat


def test_changed_field_names_counts_added_and_removed_names() -> None:
    assert changed_field_names({"a": 1, "b": 2}, {"b": 2, "c": None}) == ["a", "c"]
    assert changed_field_names({}, {}) == []


def test_actor_from_request_reads_the_context_and_cuts_the_user_agent() -> None:
    user = SimpleNamespace(id=3, username="bob", role="admin")
    req = SimpleNamespace(
        context=SimpleNamespace(user=user, client_ip="198.51.100.4"),
        get_header=lambda name: "X" * 600 if name == "User-Agent" else None,
    )
    actor = Actor.from_request(req)
    assert (actor.user_id, actor.username, actor.client_ip) == (3, "bob", "198.51.100.4")
    assert actor.user_agent == "X" * 512
    anonymous = SimpleNamespace(
        context=SimpleNamespace(user=None, client_ip="::1"), get_header=lambda name: None
    )
    assert Actor.from_request(anonymous) == Actor(None, None, "::1", None)
    assert Actor.system("worker") == Actor(None, "worker", None, None)


def test_an_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="key"):
        AuditLedger("")


def test_another_key_sees_every_row_as_forged(db: Engine, ledger: AuditLedger) -> None:
    ledger.record_now(db, ALICE, "login success")
    result = AuditLedger("some other key entirely, long enough").verify_now(db)
    assert (result.ok, result.first_bad_id) == (False, 1)


# --- checkpoints ---------------------------------------------------------------------------


def test_checkpoint_of_an_empty_ledger_and_round_trip(db: Engine, ledger: AuditLedger) -> None:
    empty = ledger.checkpoint_now(db)
    assert empty.startswith("asckpt1.0.0." + GENESIS_HASH + ".")
    for _ in range(4):
        ledger.record_now(db, ALICE, "login success")
    mark = ledger.parse_checkpoint(ledger.checkpoint_now(db))
    assert (mark.count, mark.last_id, mark.head_hash) == (4, 4, rows(db)[-1]["row_hash"])
    assert ledger.verify_now(db, empty).ok
    assert ledger.verify_now(db, ledger.checkpoint_now(db)).summary() == "ok 4 rows"


def forged_variants(good: str) -> list[str]:
    prefix, count, last_id, head, mac = good.split(".")
    flipped = mac[:-1] + ("0" if mac[-1] != "0" else "1")
    return [
        f"{prefix}.{int(count) + 1}.{int(last_id) + 1}.{head}.{mac}",  # counts changed
        f"{prefix}.{count}.{last_id}.{'a' * 64}.{mac}",  # head changed
        f"{prefix}.{count}.{last_id}.{head}.{flipped}",  # signature changed
        f"asckpt2.{count}.{last_id}.{head}.{mac}",
        good[:-5],
        good.replace(".", ":"),
        f"{prefix}.-1.{last_id}.{head}.{mac}",
        f"{prefix}.{count}.{last_id}.{head.upper()}.{mac}",
        "",
        "garbage",
    ]


def test_forged_or_garbled_checkpoints_are_rejected(db: Engine, ledger: AuditLedger) -> None:
    ledger.record_now(db, ALICE, "login success")
    good = ledger.checkpoint_now(db)
    for bad in forged_variants(good):
        with pytest.raises(ValueError, match="checkpoint"):
            ledger.parse_checkpoint(bad)
        with pytest.raises(ValueError, match="checkpoint"):
            ledger.verify_now(db, bad)
    with pytest.raises(ValueError, match="signature"):
        AuditLedger("another key that is long enough for us").parse_checkpoint(good)
    assert ledger.parse_checkpoint(f"  {good}\n").count == 1
