"""Fixtures of the security tests: a signed-in admin at a known address and audit rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, select

from alertstation.audit.tables import audit_logs
from tests.support import SignedIn
from tests.support import StationHarness as Station

ADMIN_IP = "198.51.100.10"


@pytest.fixture
def admin(station: Station) -> SignedIn:
    """An admin signed in from ADMIN_IP (a direct, untrusted peer: its own address counts)."""
    station.add_user("boss", "admin")
    return station.sign_in("boss", remote_addr=ADMIN_IP)


@pytest.fixture
def audit_rows(engine: Engine) -> Callable[[], list[dict[str, Any]]]:
    """Return a function listing the audit rows written so far (action, target, details)."""

    def rows() -> list[dict[str, Any]]:
        query = select(
            audit_logs.c.action, audit_logs.c.target, audit_logs.c.client_ip, audit_logs.c.details
        ).order_by(audit_logs.c.id)
        with engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

    return rows
