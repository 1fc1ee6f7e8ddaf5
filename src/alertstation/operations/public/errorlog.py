"""The station's recent errors: a small in-memory ring of ERROR log records of this process.

Installed once per process on the ``alertstation`` logger; the diagnostics bundle reads it. Only
the time, logger, message and the last line of an exception are kept, and at most ``SIZE``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from datetime import UTC, datetime
from typing import Any

SIZE = 50
MESSAGE_CHARS = 500


class RecentErrors(logging.Handler):
    """Keep the last ``SIZE`` records at ERROR or above."""

    #: ``configure_logging`` keeps this handler when it replaces the station's output handlers.
    keep_on_reconfigure = True

    def __init__(self, size: int = SIZE) -> None:
        super().__init__(level=logging.ERROR)
        self._records: deque[dict[str, Any]] = deque(maxlen=size)
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            entry = {
                "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="seconds"),
                "level": record.levelname.lower(),
                "logger": record.name,
                "message": record.getMessage()[:MESSAGE_CHARS],
            }
            if record.exc_info and record.exc_info[1] is not None:
                ex = record.exc_info[1]
                entry["exception"] = f"{type(ex).__name__}: {ex}"[:MESSAGE_CHARS]
        except Exception:  # a broken record must never break the caller's logging
            self.handleError(record)
            return
        with self._guard:
            self._records.append(entry)

    def entries(self) -> list[dict[str, Any]]:
        """Return the kept records, newest first."""
        with self._guard:
            return list(reversed(self._records))


_installed: RecentErrors | None = None
_install_guard = threading.Lock()


def recent_errors() -> RecentErrors:
    """Return this process's ring of recent errors, installing it on first use."""
    global _installed
    with _install_guard:
        if _installed is None:
            _installed = RecentErrors()
        logger = logging.getLogger("alertstation")
        if _installed not in logger.handlers:  # attached again if something removed it
            logger.addHandler(_installed)
        return _installed
