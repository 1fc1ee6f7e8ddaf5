"""Count requests per address over a sliding window, in memory, in bounded space.

``RateCounter`` splits the window into ``slices`` equal slices and keeps, per address, one count
per slice and their total, so counting a request is O(1) (a slice change clears at most
``slices`` counts) and an address costs the same few words whatever its rate, where a list of
timestamps grows with the threshold. The count covers the current slice and the ``slices - 1``
before it: between ``window * (1 - 1/slices)`` and ``window`` seconds back, so it never counts a
request older than the window.

Addresses are kept in least-recently-active order (moved to the end when their slice changes,
not on every request) and the oldest is dropped when ``capacity`` is reached, so memory is
bounded whatever the number of clients and an address that keeps sending stays tracked.

Batches: with ``batch`` set, every ``batch`` requests an address sends within one window are
reported once (``hit`` returns the time of the first of them). The automatic-ban middleware
writes those reports to the database and adds up the reports of every process, so an address
spreading a flood over several web processes is still caught, at the cost of one row per batch
from busy addresses only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

from alertstation.kernel_loader import load_kernel

DEFAULT_SLICES = 10
DEFAULT_CAPACITY = 10_000

# Positions in an address's state list.
_TICK, _TOTAL, _PENDING, _PENDING_SINCE, _SLICES = 0, 1, 2, 3, 4


class PyRateCounter:
    """Per-address request counts over a sliding window, with a cap on the addresses kept."""

    def __init__(
        self,
        window: float,
        *,
        batch: int = 0,
        slices: int = DEFAULT_SLICES,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        if window <= 0:
            raise ValueError(f"window must be positive, got {window}")
        if slices < 1 or capacity < 1 or batch < 0:
            raise ValueError("slices and capacity must be at least 1, batch at least 0")
        self.window = float(window)
        self._per_slice = slices / self.window
        self._zeros = [0] * slices
        self._slices = slices
        self._batch = batch
        self._capacity = capacity
        self._states: OrderedDict[str, list[Any]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._states)

    @property
    def batch(self) -> int:
        """Return the batch size (0: no batches)."""
        return self._batch

    @property
    def capacity(self) -> int:
        """Return the most addresses kept at once."""
        return self._capacity

    def hit(self, address: str, now: float) -> tuple[int, float | None]:
        """Count one request from ``address`` at ``now`` (seconds).

        Return the requests from the address within the window, this one included, and, when
        this request completed a batch, the time of the batch's first request (else None).
        """
        tick = int(now * self._per_slice)
        with self._lock:
            states = self._states
            state = states.get(address)
            if state is None:
                if len(states) >= self._capacity:
                    states.popitem(last=False)
                state = states[address] = [tick, 0, 0, now, *self._zeros]
            elif state[_TICK] != tick:
                self._advance(state, tick)
                states.move_to_end(address)
            state[_SLICES + tick % self._slices] += 1
            count: int = state[_TOTAL] + 1
            state[_TOTAL] = count
            if not self._batch:
                return count, None
            if not state[_PENDING] or now - state[_PENDING_SINCE] >= self.window:
                state[_PENDING_SINCE] = now  # a batch must fill within one window
                state[_PENDING] = 0
            state[_PENDING] += 1
            if state[_PENDING] < self._batch:
                return count, None
            state[_PENDING] = 0
            return count, state[_PENDING_SINCE]

    def _advance(self, state: list[Any], tick: int) -> None:
        last: int = state[_TICK]
        slices = self._slices
        if tick - last >= slices or tick < last:  # all slices stale (or the clock went back)
            state[_SLICES:] = self._zeros
            state[_TOTAL] = 0
        else:
            while last < tick:
                last += 1
                index = _SLICES + last % slices
                state[_TOTAL] -= state[index]
                state[index] = 0
        state[_TICK] = tick

    def count(self, address: str, now: float) -> int:
        """Return the requests from ``address`` within the window at ``now``; counts nothing."""
        tick = int(now * self._per_slice)
        with self._lock:
            state = self._states.get(address)
            if state is None:
                return 0
            if state[_TICK] != tick:
                self._advance(state, tick)
            return state[_TOTAL]  # type: ignore[no-any-return]

    def forget(self, address: str) -> None:
        """Drop everything known about ``address`` (after it was banned or found exempt)."""
        with self._lock:
            self._states.pop(address, None)


_native = load_kernel("ratecount")

HAS_NATIVE: Final[bool] = _native is not None

if TYPE_CHECKING:
    RateCounter = PyRateCounter
else:
    RateCounter = _native.RateCounter if _native is not None else PyRateCounter
