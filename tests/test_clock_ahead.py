"""The year-ahead run (`make test-clock-ahead`) really moves the clock the tests see."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from tests.support import Clock

REAL_EPOCH = os.environ.get("ALERTSTATION_TEST_REAL_EPOCH")


@pytest.mark.skipif(not REAL_EPOCH, reason="only in the year-ahead run")
def test_the_clock_is_a_year_ahead_of_the_real_one() -> None:
    assert REAL_EPOCH is not None
    assert time.time() - float(REAL_EPOCH) >= 364 * 86400


def test_the_test_clock_starts_from_now() -> None:
    before = datetime.now(UTC).replace(second=0, microsecond=0)
    start = Clock().now
    assert before <= start <= datetime.now(UTC)
    assert (start.second, start.microsecond) == (0, 0)
