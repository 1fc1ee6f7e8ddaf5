"""Run a worker job's round in a thread of its own, one round at a time.

The worker's scheduler calls its jobs in turn; a job that may wait on the network (a feed, an
Icecast server, a mail relay) hands its round to a :class:`RoundRunner` so that the other jobs
(EAS forwarding every 5 s among them) never wait for it, and a slow round is never joined by a
second one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class RoundRunner:
    """Start rounds of one job in a daemon thread, never two at once."""

    def __init__(self, name: str, log: logging.Logger, failure: str) -> None:
        self.name = name
        self._log = log
        self._failure = failure  # logged with the traceback when a round raises
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self, work: Callable[[], object]) -> bool:
        """Run ``work`` in a new thread unless the last round still runs; True if started."""
        if not self._lock.acquire(blocking=False):
            return False

        def run() -> None:
            try:
                work()
            except Exception:
                self._log.exception(self._failure)
            finally:
                self._lock.release()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        return True

    def wait(self, timeout: float | None = None) -> None:
        """Wait until the round started last has finished (or ``timeout`` seconds)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
