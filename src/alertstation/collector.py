"""Pause Python's cyclic garbage collector over bulk work whose objects all stay alive.

A batch (a CAP import, an access-log import) makes tens of thousands of container objects that
all live until the batch is written. While they live, every pass of the cyclic collector walks
them again and frees nothing; in a large process its full passes walk the whole heap as well.
``paused()`` switches the collector off for the batch and back on when the last overlapping
batch ends. Objects are still freed by reference counting as usual; only cycles wait, and the
collector's first pass after the batch finds them.

The switch is process-wide, so overlapping batches on several threads share one count, and a
collector that was already off (an embedding application's choice) is left off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # batches inside ``paused()`` right now
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def paused() -> Iterator[None]:
    """Keep the cyclic collector off while the block runs (nesting and threads allowed)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
