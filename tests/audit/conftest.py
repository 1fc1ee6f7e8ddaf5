"""Fixtures of the audit tests: a ledger with its own key and an emptied audit table."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from alertstation.audit.ledger import AuditLedger
from alertstation.audit.tables import audit_logs
from tests.support import clear_tables


@pytest.fixture
def ledger_key() -> str:
    """A fresh ledger key."""
    return secrets.token_urlsafe(48)


@pytest.fixture
def ledger(ledger_key: str) -> AuditLedger:
    """A ledger signing with ``ledger_key``."""
    return AuditLedger(ledger_key)


@pytest.fixture
def db(engine: Engine) -> Iterator[Engine]:
    """The shared test engine with an empty audit table; every table is emptied afterwards."""
    with engine.begin() as conn:
        conn.execute(audit_logs.delete())
    try:
        yield engine
    finally:
        clear_tables(engine)


class ListHandler(logging.Handler):
    """Keep the records logged to one logger (independent of other handlers' setup)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def audit_log_records() -> Iterator[list[logging.LogRecord]]:
    """Records logged by ``alertstation.audit`` during the test."""
    handler = ListHandler()
    logger = logging.getLogger("alertstation.audit")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
