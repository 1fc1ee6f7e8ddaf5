"""Validate input for the SAME AFSK kernel and call it (or its numpy reference as a fallback).

The compiled module ``alertstation._native.afsk`` does the work. This module checks and
converts arguments, keeps a plain numpy reference of every kernel function (the oracle the
tests compare against) and falls back to it only when the compiled module is missing. With
``ALERTSTATION_REQUIRE_NATIVE=1`` in the environment a missing compiled module is an
ImportError instead, so a slow fallback cannot pass a test run unnoticed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Final

import numpy as np
import numpy.typing as npt

from alertstation.kernel_loader import load_kernel

Float32Array = npt.NDArray[np.float32]
Int16Array = npt.NDArray[np.int16]

SAME_BAUD: Final[float] = 1562.5 / 3.0  # 520 5/6 bit/s
MARK_HZ: Final[float] = 6250.0 / 3.0  # 2083 1/3 Hz, bit 1
SPACE_HZ: Final[float] = 1562.5  # bit 0
PREAMBLE_BYTE: Final[int] = 0xAB
PREAMBLE: Final[bytes] = bytes([PREAMBLE_BYTE]) * 16
ATTENTION_HZ: Final[tuple[float, float]] = (853.0, 960.0)
NWR_ATTENTION_HZ: Final[tuple[float]] = (1050.0,)
MIN_SAMPLE_RATE: Final[int] = 8000
MAX_SAMPLE_RATE: Final[int] = 96000
MAX_TONE_SECONDS: Final[float] = 120.0
INT16_FULL_SCALE: Final[float] = 32767.0

_TWO_PI: Final[float] = 2.0 * math.pi


# --- numpy reference: same signatures and semantics as alertstation._native.afsk -------------


def _wrap_phase(phase: float) -> float:
    """Fold a finite phase into [0, 2*pi) the way the kernel does."""
    phase = math.fmod(phase, _TWO_PI)
    if phase < 0.0:
        phase += _TWO_PI
    return 0.0 if phase >= _TWO_PI else phase


def _bit_edge(index: int, sample_rate: float) -> int:
    """Return the first sample of bit ``index``: round(index * sample_rate / SAME_BAUD)."""
    return math.floor(float(index) * sample_rate * 3.0 / 1562.5 + 0.5)


def reference_modulate(
    data: bytes | bytearray | memoryview, sample_rate: float, amplitude: float, phase: float
) -> tuple[Float32Array, float]:
    """Modulate bytes (8 bits each, LSB first) as continuous-phase AFSK, one bit at a time."""
    sample_rate = float(sample_rate)
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
    mark_step = _TWO_PI * MARK_HZ / sample_rate
    space_step = _TWO_PI * SPACE_HZ / sample_rate
    out = np.empty(_bit_edge(bits.size, sample_rate), dtype=np.float32)
    phase = _wrap_phase(float(phase))
    start = 0
    for index, bit in enumerate(bits.tolist(), start=1):
        stop = _bit_edge(index, sample_rate)
        step = mark_step if bit else space_step
        offsets = np.arange(stop - start, dtype=np.float64)
        out[start:stop] = amplitude * np.sin(phase + offsets * step)
        phase = _wrap_phase(phase + (stop - start) * step)
        start = stop
    return out, phase


def reference_tone_mix(
    frequencies: npt.ArrayLike, n_samples: int, sample_rate: float, amplitude: float
) -> Float32Array:
    """Return float32 ``amplitude / len(frequencies) * sum(sin(2*pi*f*j / sample_rate))``."""
    tones = np.asarray(frequencies, dtype=np.float64)
    index = np.arange(n_samples, dtype=np.float64)
    acc = np.zeros(n_samples, dtype=np.float64)
    for frequency in tones.tolist():
        cycles = frequency * index / sample_rate
        acc += np.sin(_TWO_PI * (cycles - np.floor(cycles)))
    return (acc * (amplitude / tones.size)).astype(np.float32)


def reference_to_int16(samples: Float32Array, out: Int16Array, gain: float) -> None:
    """Fill ``out`` with ``samples * gain`` rounded half to even, saturated to +-32767."""
    if samples.shape[0] != out.shape[0]:
        raise ValueError(f"out holds {out.shape[0]} samples but samples holds {samples.shape[0]}")
    with np.errstate(invalid="ignore"):
        scaled = samples.astype(np.float64) * gain
    scaled[np.isnan(scaled)] = 0.0
    out[:] = np.clip(np.rint(scaled), -INT16_FULL_SCALE, INT16_FULL_SCALE).astype(np.int16)


# --- implementation choice ------------------------------------------------------------------

_native: ModuleType | None = load_kernel("afsk")

HAS_NATIVE: Final[bool] = _native is not None

_modulate_impl: Callable[..., tuple[Float32Array, float]]
_tone_mix_impl: Callable[..., Float32Array]
_to_int16_impl: Callable[..., None]
if _native is not None:
    _modulate_impl = _native.afsk_modulate
    _tone_mix_impl = _native.tone_mix
    _to_int16_impl = _native.to_int16
else:
    _modulate_impl = reference_modulate
    _tone_mix_impl = reference_tone_mix
    _to_int16_impl = reference_to_int16


# --- validation -----------------------------------------------------------------------------


def _real(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise ValueError unless it is a real number (not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def _check_sample_rate(sample_rate: object) -> int:
    """Return the sample rate as an int, or raise ValueError naming the allowed range."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Integral):
        raise ValueError(
            f"sample_rate must be an int in {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, "
            f"got {sample_rate!r}"
        )
    rate = int(sample_rate)
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise ValueError(
            f"sample_rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {rate}"
        )
    return rate


def _check_amplitude(amplitude: object) -> float:
    """Return the amplitude as a float, or raise ValueError unless 0 < amplitude <= 1."""
    level = _real("amplitude", amplitude)
    if not 0.0 < level <= 1.0:
        raise ValueError(f"amplitude must satisfy 0 < amplitude <= 1, got {amplitude!r}")
    return level


def _check_finite(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise ValueError unless it is a finite number."""
    number = _real(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def _check_tones(frequencies: object, sample_rate: int) -> npt.NDArray[np.float64]:
    """Return the tone frequencies as float64, each strictly between 0 and Nyquist."""
    if isinstance(frequencies, str | bytes) or not isinstance(frequencies, Sequence | np.ndarray):
        raise ValueError(f"frequencies must be a sequence of numbers, got {frequencies!r}")
    tones = [_check_finite(f"frequencies[{i}]", f) for i, f in enumerate(frequencies)]
    if not tones:
        raise ValueError("frequencies must hold at least one tone")
    nyquist = sample_rate / 2
    for index, tone in enumerate(tones):
        if not 0.0 < tone < nyquist:
            raise ValueError(
                f"frequencies[{index}] must be within 0..{nyquist:g} Hz (exclusive), got {tone:g}"
            )
    return np.array(tones, dtype=np.float64)


def _as_byte_view(data: object) -> memoryview:
    """Return ``data`` as a flat unsigned-byte view, or raise ValueError if not bytes-like."""
    if isinstance(data, str):
        raise ValueError("data must be bytes-like, got str; encode it first (see encode_burst)")
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"data must be bytes-like, got {type(data).__name__}") from None
    if not view.c_contiguous:
        raise ValueError("data must be a contiguous buffer")
    return view.cast("B")


# --- public API -----------------------------------------------------------------------------


def encode_burst(text: str) -> bytes:
    """Return the SAME burst for ``text``: 16 preamble bytes 0xAB, then the text as ASCII.

    Header characters are 7-bit ASCII with the eighth bit zero (47 CFR 11.31); any other
    character is a ValueError naming its 0-based position.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    for position, char in enumerate(text):
        if ord(char) > 0x7F:
            raise ValueError(
                f"character {char!r} at position {position} is not 7-bit ASCII (U+{ord(char):04X})"
            )
    return PREAMBLE + text.encode("ascii")


def afsk_modulate(
    data: bytes | bytearray | memoryview,
    *,
    sample_rate: int,
    amplitude: float = 0.8,
    phase: float = 0.0,
) -> tuple[Float32Array, float]:
    """Modulate bytes as continuous-phase SAME AFSK; return (float32 samples, end phase).

    Each byte is sent as its 8 bits, least significant first, as given: use ``encode_burst``
    for a header. The output has ``round(8 * len(data) * sample_rate / SAME_BAUD)`` samples.
    Pass the returned phase (in [0, 2*pi)) as ``phase`` of the next call to keep the waveform
    continuous; each call starts its own bit clock at its first sample.
    """
    view = _as_byte_view(data)
    rate = _check_sample_rate(sample_rate)
    level = _check_amplitude(amplitude)
    start = _check_finite("phase", phase)
    return _modulate_impl(view, float(rate), level, start)


def attention_tone(
    seconds: float,
    *,
    sample_rate: int,
    frequencies: Sequence[float] = ATTENTION_HZ,
    amplitude: float = 0.8,
) -> Float32Array:
    """Return ``round(seconds * sample_rate)`` float32 samples of the summed tones.

    The default is the EAS two-tone attention signal (853 + 960 Hz); pass
    ``NWR_ATTENTION_HZ`` for the single 1050 Hz tone. Each tone gets ``amplitude / n``, so the
    mix never exceeds ``amplitude``.
    """
    rate = _check_sample_rate(sample_rate)
    level = _check_amplitude(amplitude)
    duration = _check_finite("seconds", seconds)
    if not 0.0 <= duration <= MAX_TONE_SECONDS:
        raise ValueError(f"seconds must be within 0..{MAX_TONE_SECONDS:g}, got {seconds!r}")
    tones = _check_tones(frequencies, rate)
    n_samples = round(duration * rate)
    return _tone_mix_impl(tones, n_samples, float(rate), level)


def to_int16(samples: npt.NDArray[np.floating]) -> Int16Array:
    """Convert float samples in [-1, 1] to int16 PCM, rounding half to even and saturating.

    Full scale is +-32767 (symmetric, so -32768 never appears); values beyond it saturate and
    NaN becomes 0. Any 1-D floating array is accepted and read as float32.
    """
    array = np.asarray(samples)
    if array.ndim != 1:
        raise ValueError(f"samples must be a 1-D array, got {array.ndim} dimensions")
    if array.dtype.kind != "f":
        raise ValueError(f"samples must be a floating-point array, got dtype {array.dtype}")
    with np.errstate(over="ignore"):  # float64 beyond float32 range becomes inf, then saturates
        source = np.ascontiguousarray(array, dtype=np.float32)
    out = np.empty(source.shape[0], dtype=np.int16)
    _to_int16_impl(source, out, INT16_FULL_SCALE)
    return out
