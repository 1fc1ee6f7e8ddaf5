"""Time the levels kernel on one hour of 44.1 kHz audio against numpy and ffmpeg silencedetect.

Two comparisons, outputs checked before anything is timed:

* per-block RMS, peak and clipping counts against numpy, chunked as a monitor would be (10 s
  chunks, 0.1 s blocks): the same figures, numpy's sums in another order;
* silence detection against ffmpeg's ``silencedetect`` reading the same PCM from a pipe: the same
  silences, within one block.

CI runs this file with ``--benchmark-disable`` so every comparison still executes once.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from alertstation.audio.levels import DEFAULT_CLIP_LEVEL, LevelMeter

FFMPEG = shutil.which("ffmpeg")
if FFMPEG is None:
    pytest.skip("ffmpeg is not installed", allow_module_level=True)

RATE = 44_100
BLOCK = RATE // 10  # 0.1 s
CHUNK = 10 * RATE  # 10 s, a whole number of blocks
PATTERN_SECONDS = 600  # ten seeded minutes, played six times: one hour
REPEATS = 6
THRESHOLD_DBFS = -50.0
MIN_SILENCE = 2.0
SEED = 20261124

Int16Array = npt.NDArray[np.int16]


def build_pattern(seed: int = SEED) -> Int16Array:
    """Return ten minutes of tones (some clipping) and near-silent gaps, as int16."""
    rng = np.random.default_rng(seed)
    pieces: list[np.ndarray] = []
    total = 0
    loud = True
    while total < PATTERN_SECONDS * RATE:
        seconds = rng.uniform(5, 40) if loud else rng.uniform(3, 15)
        n = min(round(seconds * RATE), PATTERN_SECONDS * RATE - total)
        if loud:
            t = np.arange(n) / RATE
            amplitude = rng.choice([0.3, 0.6, 1.2])  # 1.2 clips
            piece = np.clip(amplitude * np.sin(2 * math.pi * rng.uniform(200, 2000) * t), -1, 1)
            samples = np.round(piece * 32767)
        else:
            samples = rng.integers(-3, 4, n)  # about -80 dBFS of noise
        pieces.append(samples.astype(np.int16))
        total += n
        loud = not loud
    pattern = np.concatenate(pieces)
    pattern[-RATE:] = pattern[:RATE]  # end loud, as the hour's next lap begins loud
    return pattern


def chunks(pattern: Int16Array) -> Iterator[Int16Array]:
    """Yield the hour as 10-second chunks (views; nothing is copied)."""
    for _ in range(REPEATS):
        for start in range(0, pattern.size, CHUNK):
            yield pattern[start : start + CHUNK]


def ours_levels(pattern: Int16Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return per-block RMS, peak (dBFS) and clipping counts of the hour from the kernel."""
    meter = LevelMeter(RATE, block_seconds=0.1)
    rms, peak, clipped = [], [], []
    for chunk in chunks(pattern):
        got = meter.feed(chunk)
        rms.append(got.rms_dbfs)
        peak.append(got.peak_dbfs)
        clipped.append(got.clipped)
    return np.concatenate(rms), np.concatenate(peak), np.concatenate(clipped)


def numpy_levels(pattern: Int16Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same figures with numpy, chunk by chunk: scale, square, mean, max, count."""
    rms, peak, clipped = [], [], []
    for chunk in chunks(pattern):
        x = chunk.astype(np.float64).reshape(-1, BLOCK) * (1.0 / 32768.0)
        mean = np.mean(x * x, axis=1)
        a = np.abs(x)
        top = a.max(axis=1)
        with np.errstate(divide="ignore"):
            rms.append(np.maximum(10.0 * np.log10(mean), -120.0))
            peak.append(np.maximum(20.0 * np.log10(top), -120.0))
        clipped.append((a >= DEFAULT_CLIP_LEVEL).sum(axis=1))
    return np.concatenate(rms), np.concatenate(peak), np.concatenate(clipped)


def ours_silences(pattern: Int16Array) -> list[tuple[str, float]]:
    """Return the silence events of the hour (seconds) from the kernel."""
    meter = LevelMeter(
        RATE, threshold_dbfs=THRESHOLD_DBFS, min_silence_seconds=MIN_SILENCE, hysteresis_db=0
    )
    events = []
    for chunk in chunks(pattern):
        events.extend((kind, at / RATE) for kind, at in meter.feed(chunk).events)
    return events


_FFMPEG_EVENT = re.compile(r"silence_(start|end): (-?[0-9.]+)")


def ffmpeg_silences(pattern: Int16Array) -> list[tuple[str, float]]:
    """Return ffmpeg silencedetect's events for the same PCM, written to its standard input."""
    assert FFMPEG is not None
    command = [
        FFMPEG,
        "-hide_banner",
        "-nostats",
        "-f",
        "s16le",
        "-ar",
        str(RATE),
        "-ac",
        "1",
        "-i",
        "pipe:0",
        "-af",
        f"silencedetect=n={THRESHOLD_DBFS}dB:d={MIN_SILENCE}",
        "-f",
        "null",
        "-",
    ]
    errors: list[bytes] = []
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as process:
        assert process.stdin is not None and process.stderr is not None
        stderr = process.stderr
        reader = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
        reader.start()
        for chunk in chunks(pattern):
            process.stdin.write(chunk.astype("<i2", copy=False).tobytes())
        process.stdin.close()
        process.wait(timeout=600)
        reader.join(timeout=60)
    text = b"".join(errors).decode("utf-8", "replace")
    return [(kind, float(at)) for kind, at in _FFMPEG_EVENT.findall(text)]


@pytest.fixture(scope="module")
def pattern() -> Int16Array:
    """Return the seeded pattern, checking ours, numpy and ffmpeg agree on the hour."""
    samples = build_pattern()
    rms, peak, clipped = ours_levels(samples)
    peer_rms, peer_peak, peer_clipped = numpy_levels(samples)
    assert rms.size == REPEATS * PATTERN_SECONDS * 10
    assert np.allclose(rms, peer_rms, rtol=0, atol=1e-9)
    assert np.array_equal(peak, peer_peak)
    assert np.array_equal(clipped, peer_clipped) and clipped.sum() > 0
    mine, theirs = ours_silences(samples), ffmpeg_silences(samples)
    # ffmpeg may close the last silence only at the end of input; the hour ends loud.
    assert len(mine) == len(theirs) and len(mine) > 2 * REPEATS
    for (kind, at), (peer_kind, peer_at) in zip(mine, theirs, strict=True):
        assert kind == peer_kind
        assert abs(at - peer_at) <= 0.1 + 1e-3, (kind, at, peer_at)
    return samples


def _label(benchmark: Any, group: str, role: str, peer: str) -> None:
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = peer
    benchmark.extra_info["audio_seconds"] = REPEATS * PATTERN_SECONDS


def test_levels_ours(benchmark: Any, pattern: Int16Array) -> None:
    _label(benchmark, "audio.levels (1 h, 44.1 kHz)", "ours", "numpy chunked RMS")
    rms, _, _ = benchmark(ours_levels, pattern)
    assert rms.size == REPEATS * PATTERN_SECONDS * 10


def test_levels_peer(benchmark: Any, pattern: Int16Array) -> None:
    _label(benchmark, "audio.levels (1 h, 44.1 kHz)", "peer", "numpy chunked RMS")
    rms, _, _ = benchmark(numpy_levels, pattern)
    assert rms.size == REPEATS * PATTERN_SECONDS * 10


def test_silence_ours(benchmark: Any, pattern: Int16Array) -> None:
    _label(benchmark, "audio.silence (1 h, 44.1 kHz)", "ours", "ffmpeg silencedetect")
    assert benchmark(ours_silences, pattern)


def test_silence_peer(benchmark: Any, pattern: Int16Array) -> None:
    _label(benchmark, "audio.silence (1 h, 44.1 kHz)", "peer", "ffmpeg silencedetect")
    assert benchmark(ffmpeg_silences, pattern)
