"""Loaded by every Python process of the year-ahead run (`make test-clock-ahead`).

libfaketime moves the wall clock and leaves the monotonic clock alone
(FAKETIME_DONT_FAKE_MONOTONIC=1), so timed waits keep working; but its clock_nanosleep wrapper
refuses the absolute monotonic deadline that ``time.sleep`` passes (EINVAL). Sleeping on an event
instead takes the path that works.
"""

import os
import threading
import time

if os.environ.get("FAKETIME_DONT_FAKE_MONOTONIC") == "1":

    def _sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        threading.Event().wait(seconds)

    time.sleep = _sleep
