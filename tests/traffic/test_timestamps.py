"""The moments of times in seconds (``traffic.timestamps.Moments``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.traffic.timestamps import END_TIME, FIRST_TIME, Moments
from tests.fuzz.fuzzing import fuzz


def test_whole_and_fractional_seconds_give_the_moment_of_their_time() -> None:
    moments = Moments()
    base = 1_790_000_000  # 2026-09-21 14:13:20 UTC, 20 s into its minute
    times = [base, base + 1, base + 59, base + 60, base + 0.25, base + 61.5, 0, END_TIME - 1]
    for ts in times * 2:  # the second time round from the minutes remembered
        assert moments(ts) == datetime.fromtimestamp(ts, UTC)
        assert moments(ts).tzinfo is UTC


def test_the_memory_of_minutes_starts_anew_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Moments, "MINUTES", 2)
    moments = Moments()
    for ts in range(0, 60 * 10, 7):
        assert moments(ts) == datetime.fromtimestamp(ts, UTC)
    assert len(moments._minutes) <= 2


@fuzz(200)
@given(
    times=st.lists(
        st.one_of(
            st.integers(int(FIRST_TIME), int(END_TIME) - 1).map(float),
            st.floats(FIRST_TIME, END_TIME, exclude_max=True),
        ),
        max_size=20,
    )
)
def test_any_storable_time_gives_the_moment_of_datetime(times: list[float]) -> None:
    moments = Moments()
    for ts in times:
        assert moments(ts) == datetime.fromtimestamp(ts, UTC)
