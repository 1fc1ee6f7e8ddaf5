"""The compiled SAME decoder is the one in use, agrees with its Python reference, checks input."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from alertstation._native import same_decode as native
from alertstation.eas import decode, kernels
from alertstation.eas.decode import decode_pcm, tone_energies
from alertstation.eas.decode import reference as decode_reference
from tests.eas.test_decode_roundtrip import build_message, burst, stretch
from tests.support import run_without_kernel

HEADER = "ZCZC-WXR-TOR-039173+0030-1241720-KCLE/NWS-"
ORACLE_RATES = [8000, 11025, 16000, 22050]
DIGITS = "0123456789"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+/ "

# --- the compiled module is the one in use ----------------------------------------------------


def test_wrapper_uses_compiled_module() -> None:
    assert decode.HAS_NATIVE is True
    assert native.__file__ is not None and native.__file__.endswith(".so")
    assert decode._Demodulator is native.Demodulator
    assert type(decode.SameStreamDecoder(8000)._demodulator) is native.Demodulator


def test_kernel_and_reference_share_constants() -> None:
    assert native.TUNING == decode_reference.TUNING
    assert native.MAX_CHARS == decode_reference.MAX_CHARS
    assert (native.KIND_HEADER, native.KIND_EOM) == (
        decode_reference.KIND_HEADER,
        decode_reference.KIND_EOM,
    )
    assert native.SAME_BAUD == kernels.SAME_BAUD
    assert native.MARK_HZ == kernels.MARK_HZ and native.SPACE_HZ == kernels.SPACE_HZ


def _import_without_native(require: bool) -> subprocess.CompletedProcess[str]:
    """Import the wrapper where the compiled module cannot load."""
    code = (
        "import numpy as np\n"
        "from alertstation.eas import decode, kernels\n"
        "pcm, _ = kernels.afsk_modulate(kernels.encode_burst('NNNN'), sample_rate=8000)\n"
        "pcm = np.concatenate([pcm, np.zeros(8000, np.float32), pcm])\n"
        "print(decode.HAS_NATIVE, decode._Demodulator.__name__)\n"
        "print(decode.decode_pcm(pcm, 8000)[0].text)\n"
    )
    return run_without_kernel("same_decode", code, require=require)


def test_fallback_is_the_reference_when_native_is_missing() -> None:
    result = _import_without_native(require=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "ReferenceDemodulator", "NNNN"]


def test_require_native_turns_a_missing_module_into_import_error() -> None:
    result = _import_without_native(require=True)
    assert result.returncode != 0
    assert "ImportError" in result.stderr and "ALERTSTATION_REQUIRE_NATIVE=1" in result.stderr


# --- native equals the reference --------------------------------------------------------------


def _run_both(samples: np.ndarray, rate: int, cuts: list[int]) -> None:
    """Feed both implementations (the native one in chunks) and compare everything."""
    reference = decode_reference.ReferenceDemodulator(rate)
    compiled = native.Demodulator(rate)
    expected = reference.feed(samples)
    got, start = [], 0
    for cut in sorted(c for c in cuts if c < samples.size) + [samples.size]:
        got += compiled.feed(samples[start:cut])
        start = max(start, cut)
    assert got == expected
    assert compiled.samples_seen == reference.samples_seen == samples.size
    assert compiled.phase == reference.phase
    assert compiled.rate_error == reference.rate_error
    assert compiled.earliest_pending_start == reference.earliest_pending_start
    assert compiled.finish() == reference.finish()


@st.composite
def short_headers(draw: st.DrawFn) -> str:
    """Draw a short header, or now and then free text over the SAME alphabet."""
    if draw(st.integers(0, 4)) == 0:
        return "ZCZC" + draw(st.text(ALPHABET, min_size=0, max_size=30))
    codes = draw(st.lists(st.text(DIGITS, min_size=6, max_size=6), min_size=1, max_size=3))
    station = draw(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ/", min_size=1, max_size=8))
    return f"ZCZC-WXR-TOR-{'-'.join(codes)}+0030-1241720-{station.ljust(8)}-"


@settings(max_examples=25, deadline=None, database=None)
@given(
    rate=st.sampled_from(ORACLE_RATES),
    header=short_headers(),
    eom=st.booleans(),
    amplitude=st.floats(0.01, 1.0),
    noise=st.floats(0.0, 0.6),
    factor=st.floats(0.95, 1.05),
    lead=st.integers(0, 3000),
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.integers(0, 40_000), max_size=6),
)
def test_native_equals_reference_on_bursts(
    rate: int,
    header: str,
    eom: bool,
    amplitude: float,
    noise: float,
    factor: float,
    lead: int,
    seed: int,
    cuts: list[int],
) -> None:
    text = "NNNN" if eom else header
    parts = [np.zeros(lead, np.float32), burst(text, rate, amplitude), np.zeros(400, np.float32)]
    signal = stretch(np.concatenate(parts), factor)
    rng = np.random.default_rng(seed)
    signal = signal + np.float32(noise * amplitude) * rng.standard_normal(signal.size, np.float32)
    _run_both(signal, rate, cuts)


@settings(max_examples=40, deadline=None, database=None)
@given(
    rate=st.sampled_from(ORACLE_RATES),
    samples=hnp.arrays(np.float32, st.integers(0, 3000), elements=st.floats(width=32)),
    cuts=st.lists(st.integers(0, 3000), max_size=4),
)
def test_native_equals_reference_on_arbitrary_samples(
    rate: int, samples: np.ndarray, cuts: list[int]
) -> None:
    _run_both(samples, rate, cuts)


@settings(max_examples=40, deadline=None, database=None)
@given(
    rate=st.sampled_from([8000, 22050, 48000, 96000]),
    samples=hnp.arrays(np.float32, st.integers(0, 2000), elements=st.floats(-2.0, 2.0, width=32)),
)
def test_tone_energies_match_numpy(rate: int, samples: np.ndarray) -> None:
    ours = tone_energies(samples, rate)
    theirs = decode_reference.reference_energies(samples, rate)
    assert ours.shape == theirs.shape == (3, samples.size)
    for row in range(3):
        scale = float(np.max(np.abs(theirs[row]), initial=0.0)) + 1e-30
        np.testing.assert_allclose(ours[row], theirs[row], rtol=0, atol=1e-9 * scale)


def test_tone_energies_separate_mark_and_space() -> None:
    rate = 22050
    window = round(rate / kernels.SAME_BAUD)
    mark, _ = kernels.afsk_modulate(b"\xff" * 8, sample_rate=rate, amplitude=0.5)
    space, _ = kernels.afsk_modulate(b"\x00" * 8, sample_rate=rate, amplitude=0.5)
    for samples, strong, weak in ((mark, 0, 1), (space, 1, 0)):
        energies = tone_energies(samples, rate)[:, 2 * window :]
        full = (0.5 * window / 2) ** 2
        assert np.all(energies[strong] > 0.9 * full)
        assert np.all(energies[weak] < 0.02 * full)
        # Power is measured after a 600 Hz high-pass: the tones pass at 97-99 %.
        assert np.allclose(energies[2, window:], 0.25 / 2 * window, rtol=0.1)


# --- input checks ------------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [7999, 96001, 44100.0, True, "44100", None])
def test_bad_sample_rates_are_refused(rate: object) -> None:
    with pytest.raises(ValueError, match="sample_rate"):
        decode_pcm(np.zeros(10, np.float32), rate)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "samples",
    [
        np.zeros(10, np.complex64),
        np.array(["a", "b"]),
        np.zeros((2, 2, 2), np.float32),
        np.zeros((10, 0), np.float32),
        np.zeros(4, bool),
    ],
)
def test_bad_samples_are_refused(samples: np.ndarray) -> None:
    with pytest.raises(ValueError, match="samples"):
        decode_pcm(samples, 8000)


def test_kernel_refuses_absurd_rates() -> None:
    with pytest.raises(ValueError, match="sample_rate"):
        native.Demodulator(500)


def test_every_sample_type_decodes_alike() -> None:
    signal, _ = build_message(HEADER, 16000)
    want = decode_pcm(signal, 16000)
    assert [item.text for item in want] == [HEADER, "NNNN"]
    as_int16 = kernels.to_int16(signal)
    assert decode_pcm(as_int16, 16000) == want
    assert decode_pcm(as_int16.astype(np.int32) << 16, 16000) == want
    assert decode_pcm(signal.astype(np.float64), 16000) == want
    assert decode_pcm(signal, np.int64(16000)) == want
    as_uint8 = (np.round(signal * 127) + 128).astype(np.uint8)
    assert [item.text for item in decode_pcm(as_uint8, 16000)] == [HEADER, "NNNN"]
    assert decode_pcm(signal.tolist(), 16000) == want


def test_first_channel_of_a_2d_array_is_used() -> None:
    signal, _ = build_message(HEADER, 8000)
    noise = np.random.default_rng(1).normal(0, 0.2, signal.size).astype(np.float32)
    assert [i.text for i in decode_pcm(np.stack([signal, noise], axis=1), 8000)][0] == HEADER
    assert decode_pcm(np.stack([noise, signal], axis=1), 8000) == []


def test_empty_and_non_finite_input() -> None:
    assert decode_pcm(np.zeros(0, np.float32), 8000) == []
    signal, spans = build_message(HEADER, 8000)
    signal[: spans[0][0] - 2000] = np.nan
    signal[-100:] = np.inf
    assert [i.text for i in decode_pcm(signal, 8000)] == [HEADER, "NNNN"]


@pytest.mark.parametrize("text", ["NNNN", "NXNN", "NNNZ"])
def test_an_eom_burst_is_returned_as_read(text: str) -> None:
    """The kernel no longer mends an EOM read with one bad character: the rule needs the text."""
    samples = np.concatenate([burst(text, 16000), np.zeros(400, np.float32)])
    for demodulator in (native.Demodulator(16000), decode_reference.ReferenceDemodulator(16000)):
        ((kind, raw, _, _),) = demodulator.feed(samples)
        assert (kind, raw) == (native.KIND_EOM, text.encode())
