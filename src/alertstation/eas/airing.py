"""Whether a message is on the air: one per process, shared through the Station."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from alertstation.errors import Conflict


class AiringState:
    """Whether a message is on the air now; one message airs at a time.

    A tiny in-process stand-in for the airing queue: :meth:`airing` takes a lock without
    waiting and holds it, with ``active`` true, while a message is written out. A second send
    meanwhile is refused with 409. It covers one process only; the airing item replaces it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = False

    @contextmanager
    def airing(self) -> Iterator[None]:
        """Mark the broadcast active for the duration of the block; 409 when one is on."""
        if not self._lock.acquire(blocking=False):
            raise Conflict("Another message is on the air; try again when it ends.", code="busy")
        self.active = True
        try:
            yield
        finally:
            self.active = False
            self._lock.release()
