"""The levels kernel against its reference twin, and both against what levels mean."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from alertstation._native import levels as native_levels
from alertstation.audio import levels
from alertstation.audio.levels import FLOOR_DBFS, LevelMeter, PyLevelMeter
from tests.support import run_without_kernel

RATE = 8000


def tone(seconds: float, amplitude: float, rate: int = RATE, hz: float = 440.0) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (amplitude * np.sin(2 * math.pi * hz * t)).astype(np.float32)


def silence(seconds: float, rate: int = RATE) -> np.ndarray:
    return np.zeros(round(seconds * rate), dtype=np.float32)


def run(meter: LevelMeter, chunks: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    rms, peak, clipped, events = [], [], [], []
    for chunk in chunks:
        got = meter.feed(chunk)
        rms.append(got.rms_dbfs)
        peak.append(got.peak_dbfs)
        clipped.append(got.clipped)
        events.extend(got.events)
    return np.concatenate(rms), np.concatenate(peak), np.concatenate(clipped), events


def test_the_native_kernel_is_the_one_in_use() -> None:
    assert levels.HAS_NATIVE
    assert isinstance(LevelMeter(RATE)._impl, native_levels.LevelMeter)


def test_levels_of_known_signals() -> None:
    floats, ints = LevelMeter(RATE, block_seconds=0.5), LevelMeter(RATE, block_seconds=0.5)
    half = tone(0.5, 0.5)
    square = np.full(RATE // 2, 32767, dtype=np.int16)
    square[::2] = -32768
    quiet = np.full(RATE // 2, 1, dtype=np.int16)
    got = [floats.feed(half), ints.feed(square), ints.feed(quiet), floats.feed(silence(0.5))]
    # A sine of amplitude A has RMS A/sqrt(2): -9.03 dBFS at 0.5.
    assert got[0].rms_dbfs[0] == pytest.approx(20 * math.log10(0.5 / math.sqrt(2)), abs=0.01)
    assert got[0].peak_dbfs[0] == pytest.approx(20 * math.log10(0.5), abs=0.01)
    assert got[0].clipped[0] == 0
    assert got[1].rms_dbfs[0] == pytest.approx(0.0, abs=0.001)
    assert got[1].clipped[0] == RATE // 2  # every sample at full scale
    assert got[2].rms_dbfs[0] == pytest.approx(20 * math.log10(1 / 32768))
    assert got[3].rms_dbfs[0] == FLOOR_DBFS and got[3].peak_dbfs[0] == FLOOR_DBFS


def test_state_carries_across_chunks_of_any_size() -> None:
    signal = np.concatenate([tone(1.3, 0.3), silence(0.7), tone(0.4, 1.0)])
    whole = run(LevelMeter(RATE), [signal])
    pieces = np.split(signal, [1, 2, 799, 800, 801, 5000, 9999, 15000])
    chunked = run(LevelMeter(RATE), pieces)
    for a, b in zip(whole[:3], chunked[:3], strict=True):
        assert np.array_equal(a, b)
    assert len(whole[0]) == 24  # 2.4 s in 0.1 s blocks; nothing left over counts yet


def test_silence_needs_its_minimum_duration_and_hysteresis_to_end() -> None:
    meter = LevelMeter(
        RATE, block_seconds=0.1, threshold_dbfs=-40, min_silence_seconds=2, hysteresis_db=6
    )
    short_gap = [tone(1, 0.5), silence(1.5), tone(1, 0.5)]
    assert run(meter, short_gap)[3] == []  # 1.5 s is not long enough
    start = meter.position
    # -43 dBFS RMS: below the threshold, so silence; then -37 dBFS, above the threshold but
    # inside the hysteresis band, so still silent; then -30 dBFS ends it.
    hum = [tone(3, 0.01), tone(1, 0.02), tone(1, 0.045)]
    events = run(meter, hum)[3]
    assert events == [("start", start), ("end", start + 4 * RATE)]
    assert not meter.silent


def test_inputs_are_checked() -> None:
    meter = LevelMeter(RATE)
    with pytest.raises(ValueError, match="int16 or float32"):
        meter.feed(np.zeros(10, dtype=np.float64))
    with pytest.raises(ValueError, match="one-dimensional"):
        meter.feed(np.zeros((2, 2), dtype=np.int16))
    with pytest.raises(ValueError, match="even number"):
        meter.feed_bytes(b"\x00\x01\x02")
    for bad in ({"threshold_dbfs": 3}, {"block_seconds": 0}, {"hysteresis_db": float("nan")}):
        with pytest.raises(ValueError, match="out of range"):
            LevelMeter(RATE, **bad)  # type: ignore[arg-type]
    assert len(meter.feed_bytes(np.full(RATE, 100, dtype="<i2").tobytes())) == 10
    with pytest.raises(ValueError, match="one sample type"):
        meter.feed(np.zeros(10, dtype=np.float32))
    twin = LevelMeter(RATE, reference=True)
    twin.feed(np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="one sample type"):
        twin.feed(np.zeros(3, dtype=np.int16))


def _pair(block: int, threshold: float, min_blocks: int, hysteresis: float) -> tuple:
    args = (block, threshold, block * min_blocks, hysteresis, 0.9)
    return native_levels.LevelMeter(*args), PyLevelMeter(*args)


def _same(a: tuple, b: tuple) -> None:
    for x, y in zip(a[:3], b[:3], strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert a[3] == b[3]


@settings(max_examples=60, deadline=None)
@given(
    samples=hnp.arrays(np.int16, st.integers(0, 600)),
    cuts=st.lists(st.integers(0, 600), max_size=4),
    block=st.integers(1, 40),
    threshold=st.floats(-100, -1),
    min_blocks=st.integers(0, 5),
    hysteresis=st.floats(0, 20),
)
def test_native_matches_the_twin_on_int16(
    samples: npt.NDArray[np.int16],
    cuts: list[int],
    block: int,
    threshold: float,
    min_blocks: int,
    hysteresis: float,
) -> None:
    ours, twin = _pair(block, threshold, min_blocks, hysteresis)
    for chunk in np.split(samples, sorted(c for c in cuts if c <= samples.size)):
        _same(ours.feed_int16(chunk), twin.feed_int16(chunk))
    assert (ours.position, ours.silent) == (twin.position, twin.silent)


@settings(max_examples=60, deadline=None)
@given(
    samples=hnp.arrays(
        np.float32,
        st.integers(0, 600),
        elements=st.floats(-2, 2, width=32) | st.just(float("nan")),
    ),
    cuts=st.lists(st.integers(0, 600), max_size=4),
    block=st.integers(1, 40),
    min_blocks=st.integers(0, 5),
)
def test_native_matches_the_twin_on_float32(
    samples: npt.NDArray[np.float32], cuts: list[int], block: int, min_blocks: int
) -> None:
    ours, twin = _pair(block, -30.0, min_blocks, 3.0)
    for chunk in np.split(samples, sorted(c for c in cuts if c <= samples.size)):
        _same(ours.feed_float32(chunk), twin.feed_float32(chunk))


def test_gated_silence_matches_the_twin() -> None:
    rng = np.random.default_rng(7)
    pieces = [tone(rng.uniform(0.1, 3), rng.choice([0.0, 0.001, 0.01, 0.5])) for _ in range(40)]
    signal = np.concatenate(pieces)
    native = LevelMeter(RATE, min_silence_seconds=1, threshold_dbfs=-45)
    twin = LevelMeter(RATE, min_silence_seconds=1, threshold_dbfs=-45, reference=True)
    a, b = run(native, [signal]), run(twin, np.array_split(signal, 7))
    _same(a, b)
    assert a[3], "the signal holds silences"


def test_fallback_is_the_twin_when_native_is_missing() -> None:
    code = (
        "from alertstation.audio import levels\n"
        "import numpy as np\n"
        "m = levels.LevelMeter(8000)\n"
        "print(levels.HAS_NATIVE, type(m._impl).__name__, len(m.feed(np.zeros(8000, 'int16'))))\n"
    )
    result = run_without_kernel("levels", code, require=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "PyLevelMeter", "10"]
    required = run_without_kernel("levels", code, require=True)
    assert required.returncode != 0 and "ALERTSTATION_REQUIRE_NATIVE" in required.stderr
