"""Check the compiled SAME AFSK kernel against its numpy reference and against the protocol."""

from __future__ import annotations

import math
import random
import subprocess
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from alertstation._native import afsk as native_afsk
from alertstation.eas import kernels
from tests.support import run_without_kernel

RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000]
HEADER = "ZCZC-WXR-TOR-039173-039051-039095+0030-1241720-KCLE/NWS-"
EXACT_BAUD = Fraction(3125, 6)  # 520 5/6 bit/s


def exact_edge(bit_index: int, sample_rate: int) -> int:
    """Return the first sample of a bit from exact rational arithmetic (never a tie)."""
    return round(Fraction(bit_index * sample_rate) / EXACT_BAUD)


def angle_between(a: float, b: float) -> float:
    """Return the absolute angular distance between two phases, in [0, pi]."""
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def demodulate(samples: npt.NDArray[np.float32], n_bits: int, sample_rate: int) -> list[int]:
    """Recover bits by comparing each bit window's energy at the mark and space tones."""
    bits = []
    for index in range(n_bits):
        start, stop = exact_edge(index, sample_rate), exact_edge(index + 1, sample_rate)
        window = samples[start:stop].astype(np.float64)
        t = np.arange(stop - start) / sample_rate
        mark = abs(np.sum(window * np.exp(-2j * np.pi * (6250 / 3) * t)))
        space = abs(np.sum(window * np.exp(-2j * np.pi * 1562.5 * t)))
        bits.append(1 if mark > space else 0)
    return bits


def bits_to_bytes(bits: list[int]) -> bytes:
    """Pack bits into bytes, least significant bit first."""
    return bytes(
        sum(bit << position for position, bit in enumerate(bits[i : i + 8]))
        for i in range(0, len(bits), 8)
    )


def dominant_frequency(samples: npt.NDArray[np.float32], sample_rate: int) -> float:
    """Return the frequency of the largest spectral peak (Hann window, zero padded)."""
    size = 1 << 18
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size), n=size))
    return float(np.argmax(spectrum)) * sample_rate / size


# --- the compiled module is the one in use ----------------------------------------------------


def test_wrapper_uses_compiled_module() -> None:
    assert kernels.HAS_NATIVE is True
    assert native_afsk.__file__ is not None and native_afsk.__file__.endswith(".so")
    assert kernels._modulate_impl is native_afsk.afsk_modulate
    assert kernels._tone_mix_impl is native_afsk.tone_mix
    assert kernels._to_int16_impl is native_afsk.to_int16
    assert kernels._modulate_impl.__module__ == "alertstation._native.afsk"


def test_constants_match_the_protocol() -> None:
    assert kernels.SAME_BAUD == native_afsk.SAME_BAUD == pytest.approx(520.8333333)
    assert kernels.MARK_HZ == native_afsk.MARK_HZ == pytest.approx(2083.3333333)
    assert kernels.SPACE_HZ == native_afsk.SPACE_HZ == 1562.5
    assert kernels.MARK_HZ == 4 * kernels.SAME_BAUD and kernels.SPACE_HZ == 3 * kernels.SAME_BAUD


def _import_without_native(require: bool) -> subprocess.CompletedProcess[str]:
    """Import the wrapper where the compiled module cannot load."""
    code = (
        "from alertstation.eas import kernels\n"
        "print(kernels.HAS_NATIVE, kernels._modulate_impl.__name__)\n"
        "print(kernels.afsk_modulate(b'\\xab', sample_rate=8000)[0].size)\n"
    )
    return run_without_kernel("afsk", code, require=require)


def test_fallback_is_the_reference_when_native_is_missing() -> None:
    result = _import_without_native(require=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "reference_modulate", "123"]


def test_require_native_turns_a_missing_module_into_import_error() -> None:
    result = _import_without_native(require=True)
    assert result.returncode != 0
    assert "ImportError" in result.stderr and "ALERTSTATION_REQUIRE_NATIVE=1" in result.stderr


# --- native equals the reference --------------------------------------------------------------


@settings(max_examples=80, deadline=None, database=None)
@given(
    data=st.binary(max_size=40),
    sample_rate=st.sampled_from(RATES),
    amplitude=st.floats(min_value=0.0, max_value=1.0, exclude_min=True),
    phase=st.floats(min_value=-100.0, max_value=100.0),
)
def test_modulate_matches_reference(
    data: bytes, sample_rate: int, amplitude: float, phase: float
) -> None:
    ours, our_phase = kernels.afsk_modulate(
        data, sample_rate=sample_rate, amplitude=amplitude, phase=phase
    )
    expected, expected_phase = kernels.reference_modulate(data, sample_rate, amplitude, phase)
    assert ours.dtype == np.float32 and ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6)
    assert 0.0 <= our_phase < 2 * math.pi
    assert angle_between(our_phase, expected_phase) < 1e-9


@settings(max_examples=40, deadline=None, database=None)
@given(
    frequencies=st.lists(st.floats(min_value=20.0, max_value=3900.0), min_size=1, max_size=3),
    n_samples=st.integers(min_value=0, max_value=3000),
    sample_rate=st.sampled_from(RATES),
    amplitude=st.floats(min_value=0.0, max_value=1.0, exclude_min=True),
)
def test_tone_mix_matches_reference(
    frequencies: list[float], n_samples: int, sample_rate: int, amplitude: float
) -> None:
    tones = kernels.attention_tone(
        n_samples / sample_rate,
        sample_rate=sample_rate,
        frequencies=frequencies,
        amplitude=amplitude,
    )
    expected = kernels.reference_tone_mix(frequencies, n_samples, sample_rate, amplitude)
    assert tones.dtype == np.float32 and tones.shape == (n_samples,)
    np.testing.assert_allclose(tones, expected, rtol=0, atol=1e-6)


@settings(max_examples=60, deadline=None, database=None)
@given(hnp.arrays(np.float32, st.integers(0, 400), elements=st.floats(width=32)))
def test_to_int16_matches_reference(samples: npt.NDArray[np.float32]) -> None:
    expected = np.empty(samples.shape[0], dtype=np.int16)
    kernels.reference_to_int16(samples, expected, kernels.INT16_FULL_SCALE)
    np.testing.assert_array_equal(kernels.to_int16(samples), expected)


# --- behaviour --------------------------------------------------------------------------------


@pytest.mark.parametrize("sample_rate", RATES + [96000])
def test_sample_count_has_no_drift(sample_rate: int) -> None:
    data = random.Random(sample_rate).randbytes(2500)  # 20000 bits, ~38 s of signal
    samples, _ = kernels.afsk_modulate(data, sample_rate=sample_rate)
    assert samples.size == exact_edge(len(data) * 8, sample_rate)


@pytest.mark.parametrize("sample_rate", [8000, 22050, 44100, 48000])
def test_phase_is_continuous_within_and_across_calls(sample_rate: int) -> None:
    amplitude = 0.9
    data = random.Random(7).randbytes(300)
    first, phase = kernels.afsk_modulate(data[:150], sample_rate=sample_rate, amplitude=amplitude)
    second, _ = kernels.afsk_modulate(
        data[150:], sample_rate=sample_rate, amplitude=amplitude, phase=phase
    )
    joined = np.concatenate([first, second]).astype(np.float64)
    bound = 2 * math.pi * kernels.MARK_HZ / sample_rate * amplitude + 1e-6
    assert np.max(np.abs(np.diff(joined))) <= bound
    assert second[0] == pytest.approx(amplitude * math.sin(phase), abs=1e-6)


def test_phase_argument_sets_the_first_sample() -> None:
    samples, _ = kernels.afsk_modulate(b"\x00", sample_rate=48000, amplitude=0.5, phase=1.0)
    step = 2 * math.pi * kernels.SPACE_HZ / 48000
    expected = [0.5 * math.sin(1.0 + k * step) for k in range(5)]
    np.testing.assert_allclose(samples[:5], expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize("sample_rate", [8000, 22050, 44100])
@pytest.mark.parametrize(("byte", "tone"), [(0xFF, kernels.MARK_HZ), (0x00, kernels.SPACE_HZ)])
def test_dominant_frequency_of_a_bit_run(sample_rate: int, byte: int, tone: float) -> None:
    samples, _ = kernels.afsk_modulate(bytes([byte]) * 8, sample_rate=sample_rate)  # 64 bits
    assert dominant_frequency(samples, sample_rate) == pytest.approx(tone, abs=1.0)


@pytest.mark.parametrize("sample_rate", [8000, 22050, 44100])
def test_independent_demodulator_recovers_the_bytes(sample_rate: int) -> None:
    data = kernels.encode_burst(HEADER) + random.Random(sample_rate).randbytes(32)
    samples, _ = kernels.afsk_modulate(data, sample_rate=sample_rate, phase=0.3)
    bits = demodulate(samples, len(data) * 8, sample_rate)
    assert bits[:8] == [1, 1, 0, 1, 0, 1, 0, 1]  # 0xAB, least significant bit first
    assert bits_to_bytes(bits) == data


def test_encode_burst_layout() -> None:
    burst = kernels.encode_burst(HEADER)
    assert burst[:16] == b"\xab" * 16
    assert burst[16:] == HEADER.encode("ascii")
    assert all(byte < 0x80 for byte in burst[16:])  # eighth bit zero on header characters
    assert kernels.encode_burst("") == b"\xab" * 16


@pytest.mark.parametrize("sample_rate", [8000, 44100])
def test_attention_tone_spectrum_and_level(sample_rate: int) -> None:
    tone = kernels.attention_tone(1.0, sample_rate=sample_rate, amplitude=0.8)
    assert tone.size == sample_rate and tone.dtype == np.float32
    assert np.max(np.abs(tone)) <= 0.8 + 1e-6
    spectrum = np.abs(np.fft.rfft(tone))  # 1 Hz bins over exactly one second
    assert sorted(np.argsort(spectrum)[-2:].tolist()) == [853, 960]
    single = kernels.attention_tone(
        0.5, sample_rate=sample_rate, frequencies=kernels.NWR_ATTENTION_HZ
    )
    assert dominant_frequency(single, sample_rate) == pytest.approx(1050.0, abs=1.0)


def test_to_int16_saturates_and_rounds() -> None:
    scale = 32767.0
    samples = np.array(
        [1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan, 0.0, 0.75 / scale, -0.75 / scale],
        dtype=np.float32,
    )
    samples = np.append(samples, np.array([0.25 / scale, 100.6 / scale], dtype=np.float32))
    pcm = kernels.to_int16(samples)
    assert pcm.dtype == np.int16
    assert pcm.tolist() == [32767, -32767, 32767, -32767, 32767, -32767, 0, 0, 1, -1, 0, 101]


@pytest.mark.parametrize("length", [1, 7, 8, 9, 15, 16, 17, 33, 1000])
def test_to_int16_kernel_matches_reference_in_every_lane(length: int) -> None:
    # The kernel converts 8 samples a step and the rest one at a time: ties, NaN, infinities
    # and both saturation edges at every position and in the tail must match the reference.
    rng = np.random.default_rng(length)
    specials = np.array(
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 32766.5, -32766.5, 32767.5, -32767.5, 40000.0,
         -40000.0, np.nan, np.inf, -np.inf, -0.0, 1e-45, 3e38, -3e38],
        dtype=np.float32,
    )  # fmt: skip
    samples = rng.uniform(-40000.0, 40000.0, length).astype(np.float32)
    picks = rng.integers(0, specials.size, length)
    use = rng.random(length) < 0.5
    samples[use] = specials[picks[use]]
    got = np.empty(length, dtype=np.int16)
    expected = np.empty(length, dtype=np.int16)
    native_afsk.to_int16(samples, got, 1.0)
    kernels.reference_to_int16(samples, expected, 1.0)
    np.testing.assert_array_equal(got, expected)
    halves = np.arange(-20.5, 21.0, 1.0, dtype=np.float32)[:length]
    got, expected = np.empty(halves.size, np.int16), np.empty(halves.size, np.int16)
    native_afsk.to_int16(halves, got, 1.0)
    kernels.reference_to_int16(halves, expected, 1.0)
    np.testing.assert_array_equal(got, expected)


def test_to_int16_accepts_float64_beyond_float32_range() -> None:
    pcm = kernels.to_int16(np.array([1e300, -1e300, 0.5], dtype=np.float64))
    assert pcm.tolist() == [32767, -32767, 16384]  # 16383.5 rounds half to even


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sample_rate", [7999, 96001, 0, -44100, 44100.0, True, "44100", None])
def test_bad_sample_rate(sample_rate: object) -> None:
    with pytest.raises(ValueError, match="sample_rate must be"):
        kernels.afsk_modulate(b"\xab", sample_rate=sample_rate)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sample_rate must be"):
        kernels.attention_tone(1.0, sample_rate=sample_rate)  # type: ignore[arg-type]


@pytest.mark.parametrize("amplitude", [0, 0.0, -0.1, 1.01, math.nan, math.inf, True, "0.5"])
def test_bad_amplitude(amplitude: object) -> None:
    with pytest.raises(ValueError, match="amplitude must"):
        kernels.afsk_modulate(b"\xab", sample_rate=8000, amplitude=amplitude)  # type: ignore[arg-type]


@pytest.mark.parametrize("phase", [math.nan, math.inf, "0"])
def test_bad_phase(phase: object) -> None:
    with pytest.raises(ValueError, match="phase must"):
        kernels.afsk_modulate(b"\xab", sample_rate=8000, phase=phase)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", ["ZCZC", 171, [0xAB], None])
def test_bad_data(data: object) -> None:
    with pytest.raises(ValueError, match="data must be bytes-like"):
        kernels.afsk_modulate(data, sample_rate=8000)  # type: ignore[arg-type]


def test_data_accepts_bytes_like() -> None:
    expected, _ = kernels.afsk_modulate(b"\xab\x01", sample_rate=8000)
    for data in (bytearray(b"\xab\x01"), memoryview(b"\xab\x01"), np.array([0xAB, 1], np.uint8)):
        samples, _ = kernels.afsk_modulate(data, sample_rate=8000)  # type: ignore[arg-type]
        np.testing.assert_array_equal(samples, expected)


def test_encode_burst_names_the_bad_character() -> None:
    with pytest.raises(ValueError, match=r"'é' at position 5 is not 7-bit ASCII"):
        kernels.encode_burst("ZCZC-é-WXR")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"frequencies": []}, "at least one tone"),
        ({"frequencies": [0.0]}, r"frequencies\[0\] must be within"),
        ({"frequencies": [853.0, 4000.0]}, r"frequencies\[1\] must be within 0..4000 Hz"),
        ({"frequencies": "853"}, "must be a sequence"),
        ({"frequencies": [math.nan]}, r"frequencies\[0\] must be finite"),
        ({"seconds": -1.0}, "seconds must be within"),
        ({"seconds": 121.0}, "seconds must be within"),
        ({"seconds": math.nan}, "seconds must be finite"),
    ],
)
def test_bad_attention_tone(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"seconds": 1.0, "sample_rate": 8000, **kwargs}
    with pytest.raises(ValueError, match=message):
        kernels.attention_tone(**arguments)  # type: ignore[arg-type]


def test_to_int16_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="1-D"):
        kernels.to_int16(np.zeros((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="floating-point"):
        kernels.to_int16(np.zeros(4, dtype=np.int16))  # type: ignore[arg-type]


def test_kernel_rejects_mismatched_output() -> None:
    with pytest.raises(ValueError, match="out holds 3 samples but samples holds 4"):
        native_afsk.to_int16(np.zeros(4, np.float32), np.zeros(3, np.int16), 32767.0)
