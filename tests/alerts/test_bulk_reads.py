"""The batch path's combined reads: settings read with the first reads, other read paths.

A chunk of the batch path reads the settings in the same statement as its first reads and keeps
the matchers built from them while the stored settings stay the same. A small batch reads with a
statement of fixed shape, a bigger one with its key lists expanded into the statement, one with
more keys than one read takes (``ingest.batch.IN_CHUNK``) in several statements; on SQLite a
bigger one binds each key list as one JSON text instead (``ingest.batch._JSON_KEYS``). All must
give what the plain reads give.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from sqlalchemy import Engine, func, insert, select
from sqlalchemy.exc import IntegrityError

from alertstation.alerts.ingest import batch as bulk
from alertstation.alerts.ingest import import_messages, rows, sql
from alertstation.alerts.parsing import AlertParseError, split_documents
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alert_geocodes
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import upgrade_to_head
from tests.alerts.test_bulk import CAP, NOW, SENDER, build, message, run
from tests.support import clear_tables, create_database, drop_database


def _in_area(engine: Engine, identifier: str) -> bool:
    body = CAP.format(identifier=identifier, sender=SENDER).encode()
    [result] = import_messages(engine, body, "test", explicit=True, now=NOW)
    assert result.outcome == "stored"
    return result.in_area


def test_a_settings_change_between_chunks_is_seen(engine: Engine) -> None:
    """The matchers kept from one chunk are not used once the stored settings differ."""
    clear_tables(engine)
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    assert _in_area(engine, "a")
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040021"])
    assert not _in_area(engine, "b")
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    assert _in_area(engine, "c")
    clear_tables(engine)


def test_two_databases_keep_their_own_settings(
    engine: Engine, backend: str, tmp_path: Path
) -> None:
    """Matchers are kept by the stored values, so another database never gets the first's."""
    clear_tables(engine)
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    url = create_database(backend, tmp_path)
    other = make_engine(url)
    try:
        upgrade_to_head(other)
        with begin_write(other) as conn:
            set_alert_settings(conn, zone_codes=["040021"])
        assert _in_area(engine, "a")
        assert not _in_area(other, "a")
        assert _in_area(engine, "b")
    finally:
        other.dispose()
        drop_database(url)
        clear_tables(engine)


@pytest.mark.parametrize(
    "patches",
    [
        {"IN_CHUNK": 1, "_JSON_KEYS": ()},
        {"_FIXED_KEYS": 0, "_JSON_KEYS": ()},
        {"_FIXED_KEYS": 0},
    ],
    ids=["separate-reads", "expanded-lists", "json-lists"],
)
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(message, max_size=4),
    batch=st.lists(message, min_size=1, max_size=10),
    explicit=st.booleans(),
)
def test_other_read_paths_store_what_one_message_at_a_time_stores(
    engine: Engine, patches: dict[str, Any], before: list[dict], batch: list[dict], explicit: bool
) -> None:
    """Big batches read with separate statements (``IN_CHUNK``), with lists expanded into one
    statement (``_FIXED_KEYS``) or, on SQLite, with each list bound as one JSON text
    (``_JSON_KEYS``); small ones with one of fixed shape. All store the same."""
    stored_before = [build(spec) for spec in before]
    messages = [build(spec) for spec in batch]
    one_by_one = run(engine, stored_before, messages, explicit, bulk=False)
    with contextlib.ExitStack() as stack:
        for name, value in patches.items():
            stack.enter_context(mock.patch.object(bulk, name, value))
        batched = run(engine, stored_before, messages, explicit, bulk=True)
    assert batched[0] == one_by_one[0]
    assert batched[1] == one_by_one[1]


def test_back_to_back_documents_split_where_the_next_one_starts() -> None:
    first = CAP.format(identifier="a", sender=SENDER).encode()
    second = CAP.format(identifier="b", sender=SENDER).encode()
    documents = split_documents(first + b"\n" + second)
    assert documents == [first + b"\n", second]
    assert etree.fromstring(documents[1]).findtext("{*}identifier") == "b"


def test_an_xml_declaration_inside_the_root_is_malformed() -> None:
    """Only after a complete root does a declaration start another document."""
    body = b'<?xml version="1.0"?><alert><?xml version="1.0"?><x/></alert>'
    with pytest.raises(AlertParseError, match="malformed XML at line 1"):
        split_documents(body)


def test_an_error_in_the_pipelined_writes_is_sqlalchemys_and_stores_nothing(
    engine: Engine,
) -> None:
    """On PostgreSQL the writes after the alert rows share one round trip; a failure among them
    is still an IntegrityError from SQLAlchemy, and the transaction stores nothing."""
    clear_tables(engine)
    with pytest.raises(IntegrityError), begin_write(engine) as conn:
        with rows.pipeline(conn):
            conn.execute(insert(cap_alert_geocodes), [{"alert_id": 1, "code_id": 1}] * 2)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(cap_alert_geocodes)).scalar() == 0


@pytest.mark.parametrize("statement", ["fixed-first", "json-first", "related"])
def test_sqlite_reads_search_their_indexes(tmp_path: Path, statement: str) -> None:
    """Every read of a message's stored neighbours searches an index, never scans a table.

    A list of row values (``(sender, identifier) IN ((?, ?), ...)``) made SQLite scan
    ``cap_alerts`` for every message, a cost that grew with the store.
    """
    engine = make_engine(f"sqlite:///{tmp_path / 'plan.db'}")
    upgrade_to_head(engine)
    chosen = {
        "fixed-first": sql._fixed_reads(3, 2, 2, False),
        "json-first": sql._JSON_READS,
        "related": sql.RELATED_JSON,
    }[statement]
    compiled = chosen.compile(dialect=engine.dialect)
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        plan = [
            row[3]
            for row in raw.execute(
                f"EXPLAIN QUERY PLAN {compiled}", ["[]"] * len(compiled.positiontup or ())
            )
        ]
    engine.dispose()
    scans = [step for step in plan if step.startswith("SCAN ") and "json_each" not in step]
    assert scans == [] or scans == ["SCAN anon_1"], plan
