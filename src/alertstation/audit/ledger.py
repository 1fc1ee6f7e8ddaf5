"""The tamper-evident audit ledger (being implemented)."""

from __future__ import annotations


class AuditLedger:
    """Append signed, chained rows to audit_logs and verify the chain."""

    def __init__(self, key: str) -> None:
        self._key = key.encode()
