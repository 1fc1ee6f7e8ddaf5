"""ActiveSnapshot.counts: precomputed per snapshot, the same answer as a walk over every alert."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from alertstation.alerts.broadcast import ActiveSnapshot

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def walked(alerts: tuple[tuple[datetime | None, bool], ...], now: datetime) -> tuple[int, int]:
    live = [in_area for expires, in_area in alerts if expires is None or expires > now]
    return len(live), sum(live)


expiry = st.one_of(st.none(), st.integers(0, 50).map(lambda m: BASE + timedelta(minutes=m)))


@given(
    alerts=st.lists(st.tuples(expiry, st.booleans()), max_size=40).map(tuple),
    minutes=st.lists(st.integers(-5, 60), min_size=1, max_size=8),
)
def test_counts_equal_a_walk_over_the_alerts_at_any_time(
    alerts: tuple[tuple[datetime | None, bool], ...], minutes: list[int]
) -> None:
    snapshot = ActiveSnapshot(alerts, BASE)
    for minute in minutes:  # in any order: a clock may also be set back
        now = BASE + timedelta(minutes=minute)
        assert snapshot.counts(now) == walked(alerts, now)


def test_an_alert_stops_counting_at_its_expiry_exactly() -> None:
    expires = BASE + timedelta(minutes=10)
    snapshot = ActiveSnapshot(
        ((expires, True), (expires, False), (None, True), (expires + timedelta(minutes=1), True)),
        BASE,
    )
    assert snapshot.counts(BASE) == (4, 3)
    assert snapshot.counts(expires - timedelta(microseconds=1)) == (4, 3)
    assert snapshot.counts(expires) == (2, 2)
    assert snapshot.counts(expires + timedelta(minutes=1)) == (1, 1)
    assert snapshot.counts(BASE) == (4, 3)


def test_empty_snapshot_counts_nothing() -> None:
    assert ActiveSnapshot((), BASE).counts(BASE) == (0, 0)


@given(
    alerts=st.lists(st.tuples(expiry, st.booleans()), max_size=40).map(tuple),
    minute=st.integers(-5, 60),
)
def test_counts_hold_over_their_span_and_change_at_its_ends(
    alerts: tuple[tuple[datetime | None, bool], ...], minute: int
) -> None:
    snapshot = ActiveSnapshot(alerts, BASE)
    now = BASE + timedelta(minutes=minute)
    active, in_area, start, end = snapshot.counts_and_span(now)
    assert (active, in_area) == walked(alerts, now)
    assert start <= now.timestamp() < end
    tick = timedelta(microseconds=1)
    if start != float("-inf"):
        first = datetime.fromtimestamp(start, UTC)
        assert walked(alerts, first) == (active, in_area) != walked(alerts, first - tick)
    if end != float("inf"):
        last = datetime.fromtimestamp(end, UTC)
        assert walked(alerts, last - tick) == (active, in_area) != walked(alerts, last)
