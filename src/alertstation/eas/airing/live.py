"""Live audio: a national message relayed from its source as it arrives (47 CFR 11.54).

An EAN or NPT heard on a relaying audio source is not recorded first and aired after: the SAME
monitor queues the station's relay through the one broadcast path as soon as the header is
decoded, with a :class:`LiveAudio` that it feeds with the source's PCM as it arrives, until the
source's EOM (or :data:`MAX_SECONDS`, a safety cap far beyond any real message; no two-minute
limit). The broadcast path registers the live audio under the archived message's id
(:func:`attach`) in the same transaction as the queueing; the airing loop takes it
(:func:`take`) when it claims the item and plays the station's header and attention signal, the
live audio, then the EOM, on every output at once; the archive output keeps the same audio.

The audio is a bounded tee: every output reading it has its own cursor into one list of chunks,
and chunks every reader has passed are dropped. A reader more than :data:`BUFFER_SECONDS` behind
skips ahead (logged), and before the airing opens the readers, at most that much is kept, so the
monitor that feeds it never blocks and memory stays bounded whatever an output does.

The monitor and the airing loop both run in the worker that leads, so the registry is a plain
dictionary of this process. An item claimed with no live audio registered (the worker restarted
in between) plays what the archive holds: the station's header, attention signal and EOM.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Final

import numpy as np
import numpy.typing as npt

log = logging.getLogger("alertstation.eas")

#: The safety cap of one live relay; a national message has no time limit (11.54).
MAX_SECONDS: Final[float] = 3600.0
#: The most audio kept for a reader that lags (or before the airing starts reading).
BUFFER_SECONDS: Final[float] = 300.0
#: How often a waiting reader looks at its ``stop`` condition.
POLL_SECONDS: Final[float] = 0.1

Samples = npt.NDArray[np.int16]


class LiveAudio:
    """The PCM of a message still arriving: fed by one writer, read by each output once."""

    def __init__(
        self,
        sample_rate: int,
        *,
        max_seconds: float = MAX_SECONDS,
        buffer_seconds: float = BUFFER_SECONDS,
    ) -> None:
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        self.sample_rate = sample_rate
        self.prefix: Samples = np.zeros(0, dtype=np.int16)
        self.eom: Samples = np.zeros(0, dtype=np.int16)
        self._limit = round(max_seconds * sample_rate)
        self._buffer = round(buffer_seconds * sample_rate)
        self._cond = threading.Condition()
        self._chunks: list[Samples] = []
        self._base = 0  # index (in chunks ever added) of self._chunks[0]
        self._kept = 0  # samples in self._chunks
        self._cursors: dict[str, int] | None = None
        self._received = 0
        self.end_reason: str | None = None

    @property
    def received_seconds(self) -> float:
        """Return how much live audio was fed so far."""
        return self._received / self.sample_rate

    @property
    def ended(self) -> bool:
        """Tell whether the source's part is over (its EOM, the cap, or the source ended)."""
        return self.end_reason is not None

    def put(self, samples: npt.NDArray[np.generic]) -> None:
        """Add the next audio of the source; the part beyond the cap is dropped and ends it."""
        with self._cond:
            if self.end_reason is not None:
                return
            piece = np.asarray(samples, dtype=np.int16)[: self._limit - self._received].copy()
            if piece.size:
                self._chunks.append(piece)
                self._kept += int(piece.size)
                self._received += int(piece.size)
                self._trim()
            if self._received >= self._limit:
                self.end_reason = "the safety cap"
                log.warning("live relay reached its cap of %.0f s", self._limit / self.sample_rate)
            self._cond.notify_all()

    def end(self, reason: str) -> None:
        """Mark the source's part over (``eom``, ``new header``, ``source ended``)."""
        with self._cond:
            if self.end_reason is None:
                self.end_reason = reason
            self._cond.notify_all()

    def open(self, names: list[str]) -> None:
        """Give each named reader a cursor at the start (the airing does this once)."""
        with self._cond:
            if self._cursors is None:
                self._cursors = {name: self._base for name in names}

    def _trim(self) -> None:
        """Drop chunks every reader passed; skip a reader (or, unread, the start) over the cap."""
        cursors = self._cursors
        while self._chunks and self._kept > self._buffer:
            if cursors is not None:
                for name, at in cursors.items():
                    if at <= self._base:
                        cursors[name] = self._base + 1
                        log.warning("live relay output %s lags; audio skipped", name)
            self._drop_first()
        if cursors:
            while self._chunks and min(cursors.values()) > self._base:
                self._drop_first()

    def _drop_first(self) -> None:
        self._kept -= int(self._chunks.pop(0).size)
        self._base += 1

    def _next(self, name: str, stop: Callable[[], bool]) -> Samples | None:
        """Return the reader's next chunk, waiting for it; None at the end or on ``stop``."""
        with self._cond:
            while True:
                if stop():
                    return None
                cursors = self._cursors or {}
                at = max(cursors.get(name, self._base), self._base)
                if at - self._base < len(self._chunks):
                    cursors[name] = at + 1
                    chunk = self._chunks[at - self._base]
                    self._trim()
                    return chunk
                if self.end_reason is not None:
                    return None
                self._cond.wait(POLL_SECONDS)

    def read(self, name: str, stop: Callable[[], bool]) -> Iterator[Samples]:
        """Yield the prefix, the live audio as it arrives, then the EOM once the source's part
        ended; stop early (no EOM) as soon as ``stop()`` is true."""
        self.open([name])
        if self.prefix.size:
            yield self.prefix
        while (chunk := self._next(name, stop)) is not None:
            yield chunk
        if not stop() and self.eom.size:
            yield self.eom


_registry: dict[int, LiveAudio] = {}
_registry_lock = threading.Lock()


def attach(message_id: int, live: LiveAudio) -> None:
    """Register the live audio of an archived message (the broadcast path does this)."""
    with _registry_lock:
        _registry[message_id] = live


def detach(message_id: int) -> None:
    """Forget the live audio of a message (its queueing failed)."""
    with _registry_lock:
        _registry.pop(message_id, None)


def take(message_id: int) -> LiveAudio | None:
    """Return and forget the live audio of a message, None when it has none in this process."""
    with _registry_lock:
        return _registry.pop(message_id, None)
