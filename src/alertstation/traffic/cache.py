"""The dashboard cache: opt-in, 30 seconds, for the live dashboard route only.

An entry is kept under its period and filters with a token of the log's state: the newest row
id and the ``traffic_rows`` generation (bumped by purges, anonymizing, pruning and imports). A
new row or any such change gives a new token, so the entry is not used again: the cache is
cleared whenever rows change, in every process.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from sqlalchemy import Connection, func, select

from alertstation.db.generations import read_generation
from alertstation.traffic.maintenance import ROWS_GENERATION
from alertstation.traffic.tables import web_request_logs

TTL_SECONDS = 30.0
MAX_ENTRIES = 64


def rows_token(conn: Connection) -> tuple[int, int]:
    """Return the state of the stored rows: newest id and the rows generation."""
    newest = conn.execute(select(func.max(web_request_logs.c.id))).scalar()
    return int(newest or 0), read_generation(conn, ROWS_GENERATION)


class DashboardCache:
    """Payloads by key, each valid for ``ttl`` seconds while the rows token is unchanged."""

    def __init__(
        self, ttl: float = TTL_SECONDS, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self._monotonic = monotonic
        self._entries: OrderedDict[Hashable, tuple[float, Hashable, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, token: Hashable) -> Any | None:
        """Return the payload kept for ``key`` if still fresh and made from the same rows."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, kept_token, payload = entry
            if kept_token != token or self._monotonic() >= expires:
                del self._entries[key]
                return None
            return payload

    def put(self, key: Hashable, token: Hashable, payload: Any) -> None:
        """Keep ``payload`` for ``key``."""
        with self._lock:
            self._entries[key] = (self._monotonic() + self.ttl, token, payload)
            self._entries.move_to_end(key)
            while len(self._entries) > MAX_ENTRIES:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
