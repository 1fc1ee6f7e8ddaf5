"""The compiled batch reader of access-log lines reads every line as its twin, ``PyLineBatch``.

Both strip each line's ending, skip blank lines, decode, read the row, leave out what is
unparsable, filtered, too old or recorded live, and key the rest by second, digest and copy
number. The tests run both over the same lines (generated, odd and fuzzed) and compare
everything they give: the batches, the keys, the counts and the progress.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alertstation.kernel_loader import load_kernel
from alertstation.traffic.enrich import FILTERED, RowEnricher
from alertstation.traffic.line_batch import PyLineBatch, import_key
from alertstation.traffic.settings import TrafficSettings
from tests.fuzz.fuzzing import fuzz
from tests.traffic import accesslog

KERNEL = load_kernel("linebatch")
needs_kernel = pytest.mark.skipif(KERNEL is None, reason="the linebatch kernel is not built")
SKIPPED = object()  # what the toy row function gives for a filtered line


def toy_row(text: str) -> Any:
    """Read ``T <seconds> <rest>`` into a row (None, seconds, rest); ``F`` is filtered out, any
    other line unparsable."""
    head, _, rest = text.partition(" ")
    if head == "F":
        return SKIPPED
    if head != "T":
        return None
    seconds, _, rest = rest.partition(" ")
    try:
        return (None, float(seconds), rest)
    except ValueError:
        return None


def read_all(
    make: Callable[..., Any],
    lines: list[bytes],
    batch: int,
    row: Callable[[str], Any] = toy_row,
    filtered: object = SKIPPED,
    oldest: float = 0.0,
    live: tuple[float, float] = (1.0, 0.0),
    generation: int = 200_000,
) -> dict[str, Any]:
    """Read ``lines`` with a reader made by ``make``; return all it gave and did."""
    calls = [0]

    def progress() -> None:
        calls[0] += 1

    reading = make(row, filtered, 1, oldest, *live, progress, generation)
    source = iter(lines)
    batches, counts = [], []
    more = True
    while more:
        rows, keys, more = reading.read(source, batch)
        batches.append((rows, keys, more))
        counts.append(reading.take_counts())
    return {
        "batches": batches,
        "counts": counts,
        "progress": calls[0],
        "number": reading.number,
    }


def assert_alike(lines: list[bytes], batch: int, **options: Any) -> dict[str, Any]:
    """Read ``lines`` with both readers; assert they gave the same; return the twin's."""
    twin = read_all(PyLineBatch, lines, batch, **options)
    if KERNEL is not None:
        assert read_all(KERNEL.LineBatch, lines, batch, **options) == twin
    return twin


LINES = [
    b"T 100 a\n",
    b"\n",
    b"T 100 a\r\n",  # the same line as the first, read again: its second copy
    b"   \t\r\n",
    b" \r\x0b\x0c \n",  # blank: only ASCII whitespace
    b"junk\n",
    b"F 101 b\n",
    b"T 5 old\n",
    b"T 150 live\n",
    b"T 200 \xff\xfe bad bytes\n",
    b"T 100 a",  # a third copy, without a line ending
    b"T 300 c\r\r\n\n",
]


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 11, 12, 100])
def test_each_line_is_kept_or_counted_once_in_batches_ending_before_a_multiple(
    batch: int,
) -> None:
    found = assert_alike(LINES, batch, oldest=50.0, live=(140.0, 160.0))
    rows = [row for rows, _, _ in found["batches"] for row in rows]
    keys = [key for _, keys, _ in found["batches"] for key in keys]
    assert [row[2] for row in rows] == ["a", "a", "\ufffd\ufffd bad bytes", "a", "c"]
    digest = hashlib.sha256(b"T 100 a").digest()
    assert keys[:2] == [import_key(100, digest, 1), import_key(100, digest, 2)]
    assert keys[3] == import_key(100, digest, 3)
    assert keys[4] == import_key(300, hashlib.sha256(b"T 300 c").digest(), 1)
    totals = [sum(count[i] for count in found["counts"]) for i in range(5)]
    assert totals == [9, 1, 1, 1, 1]  # read, unparsable, filtered, too old, recorded live
    assert found["counts"][-1][5] == 6  # the number of the first unparsable line
    assert found["progress"] == found["number"] == len(LINES)
    # A batch ends before each line from the second on whose number is a multiple of ``batch``.
    ends = [more for _, _, more in found["batches"]]
    assert ends.count(True) == sum((number + 1) % batch == 0 for number in range(1, len(LINES) + 1))
    assert ends[-1] is False


def test_copies_are_numbered_across_two_generations_then_begin_again() -> None:
    lines = [f"T 1 {name}".encode() for name in "xyzxwvxabcdx"]
    found = assert_alike(lines, 100, generation=2)
    copies = [int(key.rsplit(":", 1)[1]) for key in found["batches"][0][1]]
    # x is found in the generation before while it comes back within two generations of two
    # distinct lines; after two more without it, it is forgotten and counted from 1 again.
    assert copies == [1, 1, 1, 2, 1, 1, 3, 1, 1, 1, 1, 1]


@pytest.mark.parametrize(
    "seconds", [0.0, 0.9, 59.999, 1_800_000_000.5, 16.0**10 - 1, 16.0**10, 2e15, -1.0, -0.5]
)
def test_a_key_holds_the_second_as_python_writes_it(seconds: float) -> None:
    line = f"T {seconds!r} x".encode()
    found = assert_alike([line], 10, oldest=-1e300)
    digest = hashlib.sha256(line).digest()
    assert found["batches"][0][1] == [import_key(int(seconds), digest, 1)]


@pytest.mark.parametrize("seconds", ["nan", "inf"])
def test_a_time_that_has_no_second_is_refused_alike(seconds: str) -> None:
    lines = [f"T {seconds} x".encode()]
    errors = []
    for make in [PyLineBatch, *([KERNEL.LineBatch] if KERNEL is not None else [])]:
        with pytest.raises((ValueError, OverflowError)) as caught:
            read_all(make, lines, 10, oldest=-1e300)
        errors.append(type(caught.value))
    assert len(set(errors)) == 1


def test_lines_given_as_bytearrays_read_as_bytes() -> None:
    as_bytes = assert_alike(LINES, 4)
    as_arrays = read_all(PyLineBatch, [bytearray(line) for line in LINES], 4)
    assert as_arrays == as_bytes
    if KERNEL is not None:
        assert read_all(KERNEL.LineBatch, [bytearray(line) for line in LINES], 4) == as_bytes


@pytest.mark.parametrize("batch, generation", [(0, 10), (-1, 10), (10, 0)])
def test_a_batch_or_generation_below_one_is_refused(batch: int, generation: int) -> None:
    for make in [PyLineBatch, *([KERNEL.LineBatch] if KERNEL is not None else [])]:
        with pytest.raises(ValueError, match="batch|generation"):
            make(toy_row, SKIPPED, 1, 0.0, 1.0, 0.0, None, generation).read(iter([]), batch)


@needs_kernel
def test_an_error_reading_a_row_is_raised_as_the_twin_raises_it() -> None:
    def broken(text: str) -> Any:
        raise KeyError(text)

    for make in (PyLineBatch, KERNEL.LineBatch):
        reading = make(broken, SKIPPED, 1, 0.0, 1.0, 0.0, None)
        with pytest.raises(KeyError, match="T 1 x"):
            reading.read(iter([b"T 1 x\n"]), 10)


@pytest.mark.parametrize("odd", [False, True])
def test_a_generated_log_gives_the_same_rows_and_keys_through_the_enricher(odd: bool) -> None:
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    text = accesslog.lines(3_000, end, days=3, odd=odd)
    lines = [f"{line}\n".encode() for line in text] + [b"\n", b"not a log line\n", *[b"x"] * 2]
    lines += [lines[0], lines[1]]  # copies, far from the first
    settings = TrafficSettings(exclude_bots=True)
    found = assert_alike(
        lines,
        512,
        row=RowEnricher(settings, None).combined_rows(),
        filtered=FILTERED,
        oldest=end.timestamp() - 2 * 86_400,
        live=(end.timestamp() - 3_600, end.timestamp()),
    )
    kept = sum(len(rows) for rows, _, _ in found["batches"])
    totals = [sum(count[i] for count in found["counts"]) for i in range(5)]
    assert kept == totals[0] - sum(totals[1:]) and kept > 1_000
    assert all(totals[1:])  # some of each kind


@fuzz(200)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.builds(
                lambda head, seconds, rest, ending: f"{head} {seconds} {rest}".encode() + ending,
                st.sampled_from(["T", "F", "X"]),
                st.one_of(st.integers(-5, 400), st.floats(allow_nan=False, width=32)),
                st.text(max_size=8),
                st.sampled_from([b"", b"\n", b"\r\n", b"\r", b"\n\n"]),
            ),
        ),
        max_size=40,
    ),
    st.integers(1, 9),
    st.integers(1, 4),
)
def test_fuzzed_lines_read_alike(lines: list[bytes], batch: int, generation: int) -> None:
    try:
        twin = read_all(PyLineBatch, lines, batch, oldest=0.0, generation=generation)
    except OverflowError:  # an infinite time: refused alike (above)
        return
    if KERNEL is not None:
        assert read_all(KERNEL.LineBatch, lines, batch, generation=generation) == twin
