"""``epoch_seconds``: a station clock read as seconds since the epoch."""

from __future__ import annotations

import time
from datetime import timedelta, timezone

from alertstation.db.types import epoch_seconds, utcnow
from tests.support import Clock


def test_the_system_clock_is_read_directly() -> None:
    assert epoch_seconds(utcnow) is time.time


def test_an_injected_clock_is_followed() -> None:
    clock = Clock()
    seconds = epoch_seconds(clock)
    assert seconds() == clock.now.timestamp()
    clock.advance(seconds=90)
    assert seconds() == clock.now.timestamp()


def test_naive_and_offset_clocks_are_read_as_utc() -> None:
    moment = Clock().now
    assert epoch_seconds(lambda: moment.replace(tzinfo=None))() == moment.timestamp()
    shifted = moment.astimezone(timezone(timedelta(hours=-5)))
    assert epoch_seconds(lambda: shifted)() == moment.timestamp()
