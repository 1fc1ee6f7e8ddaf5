"""Time the compiled SAME AFSK kernel against a vectorised numpy baseline of the same maths.

Outputs of ours and the peer are compared before anything is timed. CI runs this file with
``--benchmark-disable`` so every comparison still executes once as a plain test.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from alertstation.eas import kernels

SAMPLE_RATE = 44100
AMPLITUDE = 0.8
PEER = "numpy baseline"
SEED = 20240521


def header_burst_data(seed: int = SEED) -> bytes:
    """Return three copies of a realistic SAME header burst (preamble + header), ~280 bytes."""
    rng = random.Random(seed)
    locations = "-".join(f"0{rng.randint(10, 56):02d}{rng.randint(1, 199):03d}" for _ in range(6))
    header = f"ZCZC-WXR-SVR-{locations}+0100-{rng.randint(1, 366):03d}1720-KXYZ/NWS-"
    return kernels.encode_burst(header) * 3


def numpy_afsk(
    data: bytes, sample_rate: int, amplitude: float, phase: float
) -> tuple[npt.NDArray[np.float32], float]:
    """Modulate continuous-phase AFSK with whole-array numpy: per-sample steps, then cumsum."""
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
    edges = np.floor(np.arange(bits.size + 1) * sample_rate * 3.0 / 1562.5 + 0.5).astype(np.int64)
    steps = np.where(
        bits == 1,
        2 * math.pi * kernels.MARK_HZ / sample_rate,
        2 * math.pi * kernels.SPACE_HZ / sample_rate,
    )
    increments = np.repeat(steps, np.diff(edges))
    phases = np.empty(increments.size, dtype=np.float64)
    phases[0] = phase
    np.cumsum(increments[:-1], out=phases[1:])
    phases[1:] += phase
    samples = (amplitude * np.sin(phases)).astype(np.float32)
    return samples, float((phase + increments.sum()) % (2 * math.pi))


def numpy_to_int16(samples: npt.NDArray[np.float32]) -> npt.NDArray[np.int16]:
    """Convert float32 samples to int16 with the usual numpy clip/rint one-liner."""
    return np.clip(np.rint(samples * np.float32(32767)), -32767, 32767).astype(np.int16)


def _label(benchmark: Any, group: str, role: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER


@pytest.fixture(scope="module")
def burst() -> bytes:
    """Return the seeded header burst and check ours and the peer agree on it."""
    data = header_burst_data()
    ours, our_phase = kernels.afsk_modulate(
        data, sample_rate=SAMPLE_RATE, amplitude=AMPLITUDE, phase=0.0
    )
    peer, peer_phase = numpy_afsk(data, SAMPLE_RATE, AMPLITUDE, 0.0)
    assert ours.shape == peer.shape
    assert np.allclose(ours, peer, rtol=0, atol=1e-6)
    assert abs((our_phase - peer_phase + math.pi) % (2 * math.pi) - math.pi) < 1e-6
    return data


@pytest.fixture(scope="module")
def pcm_input() -> npt.NDArray[np.float32]:
    """Return 10 s of seeded float32 audio, some of it beyond full scale, checked both ways."""
    rng = np.random.default_rng(SEED)
    samples = rng.uniform(-1.2, 1.2, 10 * SAMPLE_RATE).astype(np.float32)
    reference = np.empty(samples.size, dtype=np.int16)
    kernels.reference_to_int16(samples, reference, kernels.INT16_FULL_SCALE)
    ours = kernels.to_int16(samples)
    assert np.array_equal(ours, reference)  # bit-identical to the float64 reference twin
    ours = ours.astype(np.int32)
    peer = numpy_to_int16(samples).astype(np.int32)
    # The peer scales in float32, so a product within float32 rounding of .5 can land one
    # step away from ours (scaled in double); saturation must agree exactly.
    assert np.max(np.abs(ours - peer)) <= 1
    assert np.array_equal(ours == 32767, peer == 32767)
    assert np.array_equal(ours == -32767, peer == -32767)
    return samples


def test_afsk_modulate_ours(benchmark: Any, burst: bytes) -> None:
    _label(benchmark, "eas.afsk_modulate", "ours")
    samples, _ = benchmark(kernels.afsk_modulate, burst, sample_rate=SAMPLE_RATE, amplitude=0.8)
    assert samples.size > 0


def test_afsk_modulate_peer(benchmark: Any, burst: bytes) -> None:
    _label(benchmark, "eas.afsk_modulate", "peer")
    samples, _ = benchmark(numpy_afsk, burst, SAMPLE_RATE, AMPLITUDE, 0.0)
    assert samples.size > 0


def test_to_int16_ours(benchmark: Any, pcm_input: npt.NDArray[np.float32]) -> None:
    _label(benchmark, "eas.to_int16", "ours")
    pcm = benchmark(kernels.to_int16, pcm_input)
    assert pcm.dtype == np.int16 and pcm.size == pcm_input.size


def test_to_int16_peer(benchmark: Any, pcm_input: npt.NDArray[np.float32]) -> None:
    _label(benchmark, "eas.to_int16", "peer")
    pcm = benchmark(numpy_to_int16, pcm_input)
    assert pcm.dtype == np.int16 and pcm.size == pcm_input.size
