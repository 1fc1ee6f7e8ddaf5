"""The message encoder, resampling, WAV reading and writing, and the voice sources."""

from __future__ import annotations

import math
import shutil
import struct
import wave
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from alertstation.eas import audio, kernels, voice
from alertstation.eas.audio import apply_ramps, decode_wav, render_message, resample
from alertstation.same import SameHeader
from tests.support import SHARED_DATA, pg_required

RATES = [8000, 16000, 22050, 44100, 48000]
HEADER = "ZCZC-WXR-TOR-039173-039051+0030-1241720-KCLE/NWS-"
LEVEL = 0.8


def require_espeak() -> None:
    """Skip without espeak-ng, or fail where the test dependencies must be installed."""
    if shutil.which("espeak-ng") is None:
        if pg_required():
            pytest.fail("espeak-ng is required: run scripts/install-test-deps.sh")
        pytest.skip("espeak-ng is not installed")


def burst_pcm(text: str, rate: int, level: float = LEVEL) -> npt.NDArray[np.int16]:
    """Return one AFSK burst (preamble + text) exactly as the encoder should send it."""
    samples, _ = kernels.afsk_modulate(
        kernels.encode_burst(text), sample_rate=rate, amplitude=level
    )
    return kernels.to_int16(samples)


def bit_edge(index: int, rate: int) -> int:
    return round(Fraction(index * rate) / Fraction(3125, 6))


def demodulate_bytes(pcm: npt.NDArray[np.int16], n_bytes: int, rate: int) -> bytes:
    """Recover bytes from a burst by comparing mark and space energy in each bit window."""
    out = bytearray()
    for byte_index in range(n_bytes):
        value = 0
        for bit in range(8):
            index = byte_index * 8 + bit
            window = pcm[bit_edge(index, rate) : bit_edge(index + 1, rate)].astype(np.float64)
            t = np.arange(window.size) / rate
            mark = abs(np.sum(window * np.exp(-2j * np.pi * kernels.MARK_HZ * t)))
            space = abs(np.sum(window * np.exp(-2j * np.pi * kernels.SPACE_HZ * t)))
            value |= (mark > space) << bit
        out.append(value)
    return bytes(out)


def peak_frequencies(samples: npt.NDArray[np.generic], rate: int, count: int) -> list[int]:
    """Return the ``count`` strongest whole-hertz frequencies of exactly one second of audio."""
    spectrum = np.abs(np.fft.rfft(samples[:rate].astype(np.float64)))
    return sorted(int(i) for i in np.argsort(spectrum)[-count:])


# --- layout -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rate", RATES)
def test_message_layout_is_exact(rate: int) -> None:
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=8.0)
    header, eom = burst_pcm(HEADER, rate), burst_pcm("NNNN", rate)
    tone = kernels.attention_tone(8.0, sample_rate=rate, amplitude=LEVEL)
    tone_pcm = kernels.to_int16(apply_ramps(tone, round(0.005 * rate)))
    position = 0

    def expect(segment: npt.NDArray[np.int16] | None, size: int) -> None:
        nonlocal position
        chunk = pcm[position : position + size]
        if segment is None:
            assert not chunk.any(), f"silence expected at sample {position}"
        else:
            np.testing.assert_array_equal(chunk, segment)
        position += size

    for _ in range(3):
        expect(header, header.size)
        expect(None, rate)
    expect(tone_pcm, tone_pcm.size)
    expect(None, rate)
    for _ in range(3):
        expect(eom, eom.size)
        expect(None, rate)
    assert position == pcm.size and pcm.dtype == np.int16


@pytest.mark.parametrize("rate", [8000, 22050, 48000])
def test_bursts_carry_the_header_and_eom(rate: int) -> None:
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=0)
    burst = kernels.encode_burst(HEADER)
    assert demodulate_bytes(pcm, len(burst), rate) == burst
    eom = kernels.encode_burst("NNNN")
    eom_start = pcm.size - 3 * (burst_pcm("NNNN", rate).size + rate)
    assert demodulate_bytes(pcm[eom_start:], len(eom), rate) == eom


@pytest.mark.parametrize("rate", [8000, 44100])
@pytest.mark.parametrize("station", ["9", "P", "A1"])
def test_short_station_ids_are_sent_exactly(rate: int, station: str) -> None:
    """Cover the ids multimon-ng 1.2.0 misreads (see test_multimon) with an exact demodulator."""
    header = f"ZCZC-PEP-TXP-670029+0030-0121133-{station.ljust(8)}-"
    pcm = render_message(header, sample_rate=rate, attention_seconds=0, include_eom=False)
    burst = kernels.encode_burst(header)
    for repeat in range(3):
        start = repeat * (burst_pcm(header, rate).size + rate)
        assert demodulate_bytes(pcm[start:], len(burst), rate) == burst


@pytest.mark.parametrize("rate", [8000, 44100])
def test_attention_signals_and_ramps(rate: int) -> None:
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=8.0, include_eom=False)
    start = 3 * (burst_pcm(HEADER, rate).size + rate)
    tone = pcm[start : start + 8 * rate]
    assert peak_frequencies(tone[rate:], rate, 2) == [853, 960]
    ramp = round(0.005 * rate)
    full = LEVEL * 32767
    assert abs(int(tone[0])) < 0.01 * full and abs(int(tone[-1])) < 0.01 * full
    envelope = np.abs(tone[:ramp].astype(np.float64))
    window = 0.5 - 0.5 * np.cos(np.pi * (np.arange(ramp) + 0.5) / ramp)
    assert np.all(envelope <= window * full + 1)
    assert np.max(np.abs(tone)) <= full + 1
    assert np.max(np.abs(tone)) > 0.95 * full

    nwr = render_message(HEADER, sample_rate=rate, attention_seconds=10, attention="nwr")
    assert peak_frequencies(nwr[start + rate :], rate, 1) == [1050]
    assert nwr.size == pcm.size + 2 * rate + 3 * (burst_pcm("NNNN", rate).size + rate)


def test_header_object_and_text_render_the_same() -> None:
    header = SameHeader.parse(HEADER)
    ours = render_message(header, sample_rate=16000, attention_seconds=0)
    np.testing.assert_array_equal(
        ours, render_message(HEADER, sample_rate=16000, attention_seconds=0)
    )


def test_options_change_the_length() -> None:
    rate = 8000
    burst, eom = burst_pcm(HEADER, rate).size, burst_pcm("NNNN", rate).size
    no_tone = render_message(HEADER, sample_rate=rate, attention_seconds=0)
    assert no_tone.size == 3 * (burst + rate) + 3 * (eom + rate)
    bare = render_message(HEADER, sample_rate=rate, attention_seconds=0, include_eom=False)
    assert bare.size == 3 * (burst + rate)
    long_tone = render_message(HEADER, sample_rate=rate, attention_seconds=25)
    assert long_tone.size == no_tone.size + 26 * rate


@pytest.mark.parametrize("level", [0.1, 0.5, 1.0])
def test_level_sets_the_peak(level: float) -> None:
    pcm = render_message(HEADER, sample_rate=22050, attention_seconds=8, level=level)
    assert abs(int(np.max(np.abs(pcm))) - round(level * 32767)) <= 1


# --- voice ------------------------------------------------------------------------------------


def _voice_start(rate: int, attention_seconds: float) -> int:
    start = 3 * (burst_pcm(HEADER, rate).size + rate)
    return start + (round(attention_seconds * rate) + rate if attention_seconds else 0)


def test_int16_voice_is_placed_after_the_attention_signal() -> None:
    rate = 16000
    rng = np.random.default_rng(1)
    speech = rng.integers(-32768, 32768, 3 * rate).astype(np.int16)
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=8, voice=speech)
    start = _voice_start(rate, 8)
    expected = kernels.to_int16(speech.astype(np.float64) / 32768.0 * LEVEL)
    np.testing.assert_array_equal(pcm[start : start + speech.size], expected)
    assert not pcm[start + speech.size : start + speech.size + rate].any()
    eom = burst_pcm("NNNN", rate)
    np.testing.assert_array_equal(pcm[start + speech.size + rate :][: eom.size], eom)


def test_float_voice_without_attention_signal() -> None:
    rate = 8000
    speech = 0.5 * np.sin(2 * np.pi * 300 * np.arange(rate) / rate)
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=0, voice=speech)
    start = _voice_start(rate, 0)
    np.testing.assert_array_equal(pcm[start : start + rate], kernels.to_int16(speech * LEVEL))


def test_wav_voice_is_decoded_mixed_to_mono_and_resampled(tmp_path: Path) -> None:
    source_rate, rate = 11025, 22050
    t = np.arange(source_rate) / source_rate
    left = (0.6 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    right = (0.2 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    data = wav_bytes(np.stack([left, right], axis=1), source_rate, channels=2)
    pcm = render_message(HEADER, sample_rate=rate, attention_seconds=0, voice=data)
    start = _voice_start(rate, 0)
    segment = pcm[start : start + rate]
    assert peak_frequencies(segment, rate, 1) == [440]
    middle = np.abs(segment[rate // 4 : 3 * rate // 4].astype(np.float64))
    assert np.max(middle) == pytest.approx(0.4 * LEVEL * 32767, rel=0.02)
    assert not pcm[start + rate : start + 2 * rate].any()


@pytest.mark.parametrize(
    ("speech", "message"),
    [
        (np.zeros((2, 10), np.int16), "voice must be a 1-D"),
        (np.zeros(10, np.int32), "voice must be int16 or floating-point"),
        (np.array([0.0, np.nan]), "voice holds NaN"),
        (np.zeros(121 * 8000, np.float32), "voice lasts 121.0 s; the limit is 120 s"),
        ([0.0, 0.1], "voice must be a numpy array or WAV bytes"),
        (b"not a wav", "not a WAV file"),
    ],
)
def test_bad_voice(speech: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_message(HEADER, sample_rate=8000, voice=speech)  # type: ignore[arg-type]


# --- bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_rate": 7999}, "sample_rate must be within 8000..48000"),
        ({"sample_rate": 48001}, "sample_rate must be within 8000..48000"),
        ({"sample_rate": 44100.0}, "sample_rate must be an int"),
        ({"level": 0}, "level must satisfy 0 < level <= 1"),
        ({"level": 1.5}, "level must satisfy"),
        ({"level": "0.5"}, "level must be a number"),
        ({"attention_seconds": 7.9}, "attention_seconds must be 0"),
        ({"attention_seconds": 25.5}, "attention_seconds must be 0"),
        ({"attention_seconds": None}, "attention_seconds must be a number"),
        ({"attention": "ebs"}, "attention must be 'eas' or 'nwr'"),
        ({"header": "ZCZC-WXR-TOR-039173-03905+0030-1241720-KCLE/NWS-"}, "^location code 2:"),
        ({"header": 42}, "header must be a SameHeader or str"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"header": HEADER, **kwargs}
    with pytest.raises(ValueError, match=message):
        render_message(**arguments)  # type: ignore[arg-type]


# --- resampling -------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "target"), [(8000, 44100), (22050, 48000), (48000, 22050)])
def test_resample_keeps_a_tone(source: int, target: int) -> None:
    t = np.arange(2 * source) / source
    out = resample(np.sin(2 * np.pi * 1000 * t), source, target)
    assert out.size == 2 * target
    expected = np.sin(2 * np.pi * 1000 * np.arange(out.size) / target)
    middle = slice(target // 4, out.size - target // 4)
    assert np.max(np.abs(out[middle] - expected[middle])) < 1e-3


def test_resample_removes_what_the_new_rate_cannot_carry() -> None:
    t = np.arange(44100) / 44100
    out = resample(np.sin(2 * np.pi * 15000 * t), 44100, 22050)
    assert out.size == 22050
    assert np.max(np.abs(out[2000:-2000])) < 1e-3


def _old_resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """The hand-written FFT resampler this module used before scipy, kept as a reference."""
    x = np.asarray(samples, dtype=np.float64)
    g = math.gcd(from_rate, to_rate)
    up, down = to_rate // g, from_rate // g
    pad = -(-max(from_rate // 20, 64) // down) * down
    total = _old_next_smooth(-(-(x.size + 2 * pad) // down)) * down
    padded = np.zeros(total, dtype=np.float64)
    padded[pad : pad + x.size] = x
    out_total = total * up // down
    spectrum = np.fft.rfft(padded)
    if out_total < total:
        spectrum[out_total // 2 :] = 0.0
    resampled = np.fft.irfft(spectrum, n=out_total) * (out_total / total)
    start = pad * up // down
    return resampled[start : start + round(x.size * up / down)]


def _old_next_smooth(n: int) -> int:
    best = 1 << max(n - 1, 0).bit_length()
    power7 = 1
    while power7 < best:
        power5 = power7
        while power5 < best:
            power3 = power5
            while power3 < best:
                candidate = power3 << max(0, (-(-n // power3) - 1).bit_length())
                best = min(best, candidate)
                power3 *= 3
            power5 *= 5
        power7 *= 7
    return best


@pytest.mark.parametrize(
    ("source", "target"),
    [(8000, 44100), (16000, 44100), (22050, 44100), (22050, 48000), (44100, 22050), (48000, 44100)],
)
def test_resample_matches_the_old_fft_resampler(source: int, target: int) -> None:
    """Voice-band audio comes out as the old hand-written resampler gave it, within 1e-3.

    Tones stay below 30 % of the lower rate: nearer its Nyquist frequency the old resampler's
    brick wall and the new Kaiser filter differ by design.
    """
    rng = np.random.default_rng(source + target)
    highest = min(3400.0, 0.3 * min(source, target))
    t = np.arange(3 * source) / source
    tones = sum(
        amplitude * np.sin(2 * np.pi * frequency * t + phase)
        for amplitude, frequency, phase in zip(
            rng.uniform(0.05, 0.2, 8),
            rng.uniform(100, highest, 8),
            rng.uniform(0, 6, 8),
            strict=True,
        )
    )
    ours, old = resample(tones, source, target), _old_resample(tones, source, target)
    assert ours.shape == old.shape
    middle = slice(target // 10, ours.size - target // 10)
    assert np.max(np.abs(ours[middle] - old[middle])) < 1e-3
    assert np.max(np.abs(ours - old)) < 2e-2  # the ends: both take silence beyond them


def test_resample_lengths_and_identity() -> None:
    x = np.arange(1001, dtype=np.float64)
    same = resample(x, 8000, 8000)
    np.testing.assert_array_equal(same, x)
    assert same is not x
    assert resample(x, 8000, 44100).size == round(1001 * 44100 / 8000)
    assert resample(np.zeros(0), 8000, 16000).size == 0
    with pytest.raises(ValueError, match="samples must be 1-D"):
        resample(np.zeros((2, 2)), 8000, 16000)
    with pytest.raises(ValueError, match="to_rate must be a positive int"):
        resample(x, 8000, 0)


# --- WAV files --------------------------------------------------------------------------------


def wav_bytes(
    frames: npt.NDArray[np.generic],
    rate: int,
    *,
    channels: int = 1,
    fmt_tag: int | None = None,
    bits: int | None = None,
    extensible: bool = False,
    extra_chunk: bytes = b"",
    data_size: int | None = None,
) -> bytes:
    """Build a RIFF/WAVE file by hand (float and extensible formats included)."""
    payload = np.ascontiguousarray(frames).tobytes()
    is_float = frames.dtype.kind == "f"
    tag = fmt_tag if fmt_tag is not None else (3 if is_float else 1)
    width = bits if bits is not None else frames.dtype.itemsize * 8
    block = channels * width // 8
    fmt = struct.pack(
        "<HHIIHH", 0xFFFE if extensible else tag, channels, rate, rate * block, block, width
    )
    if extensible:
        guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        fmt += struct.pack("<HHI", 22, width, 0) + struct.pack("<H", tag) + guid_tail
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + extra_chunk
    body += b"data" + struct.pack("<I", len(payload) if data_size is None else data_size) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_write_and_read_wav_round_trip(tmp_path: Path) -> None:
    pcm = render_message(HEADER, sample_rate=16000, attention_seconds=0)
    path = tmp_path / "message.wav"
    audio.write_wav(path, pcm, 16000)
    with wave.open(str(path)) as handle:
        assert (handle.getnchannels(), handle.getsampwidth(), handle.getframerate()) == (
            1,
            2,
            16000,
        )
        assert handle.getnframes() == pcm.size
    decoded = audio.read_wav(path)
    assert decoded.sample_rate == 16000
    np.testing.assert_array_equal(np.rint(decoded.samples * 32768).astype(np.int16), pcm)


def test_write_wav_converts_floats_and_checks_input(tmp_path: Path) -> None:
    path = tmp_path / "tone.wav"
    audio.write_wav(path, np.array([0.0, 0.5, -1.0, 2.0]), 8000)
    assert audio.read_wav(path).samples.tolist() == [
        0.0,
        16384 / 32768,
        -32767 / 32768,
        32767 / 32768,
    ]
    with pytest.raises(ValueError, match="1-D"):
        audio.write_wav(path, np.zeros((2, 2), np.int16), 8000)
    with pytest.raises(ValueError, match="sample_rate must be"):
        audio.write_wav(path, np.zeros(2, np.int16), 1000)
    with pytest.raises(ValueError, match="floating-point"):
        audio.write_wav(path, np.zeros(2, np.int32), 8000)


def test_decode_float_extensible_stereo_and_odd_chunks() -> None:
    samples = np.array([0.25, -0.5, 1.0], dtype=np.float32)
    decoded = decode_wav(wav_bytes(samples, 32000))
    assert decoded.sample_rate == 32000 and decoded.samples.tolist() == [0.25, -0.5, 1.0]
    extensible = decode_wav(wav_bytes(samples, 32000, extensible=True))
    assert extensible.samples.tolist() == [0.25, -0.5, 1.0]
    stereo = np.array([[1000, 3000], [-2000, 0]], dtype=np.int16)
    odd = b"LIST" + struct.pack("<I", 3) + b"abc\x00"  # an odd-sized chunk is padded to even
    decoded = decode_wav(wav_bytes(stereo, 8000, channels=2, extra_chunk=odd))
    assert (decoded.samples * 32768).tolist() == [2000.0, -1000.0]


def test_decode_a_stream_whose_data_size_was_never_filled_in() -> None:
    frames = np.array([100, 200, 300], dtype=np.int16)
    data = wav_bytes(frames, 8000, data_size=0xFFFFFFFF) + b"\x01"  # and a partial frame
    assert (decode_wav(data).samples * 32768).tolist() == [100.0, 200.0, 300.0]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"RIFX" + b"\x00" * 40, "not a WAV file"),
        (b"RIFF\x00\x00\x00\x00WAVE", "no 'fmt ' chunk"),
        (wav_bytes(np.zeros(4, np.uint8), 8000), "16-bit PCM or 32-bit float, got format 1 with 8"),
        (wav_bytes(np.zeros(6, np.uint8), 8000, bits=24), "got format 1 with 24 bits"),
        (wav_bytes(np.zeros(4, np.float64), 8000), "got format 3 with 64 bits"),
        (wav_bytes(np.zeros(4, np.int16), 8000, fmt_tag=2), "got format 2 with 16 bits"),
        (wav_bytes(np.zeros((2, 3), np.int16), 8000, channels=3), "mono or stereo, got 3"),
        (wav_bytes(np.zeros(4, np.int16), 1000), "sample rate must be 4000-384000 Hz, got 1000"),
        (wav_bytes(np.zeros(0, np.int16), 8000), "holds no audio"),
        (wav_bytes(np.array([np.inf], np.float32), 8000), "NaN or infinite"),
    ],
)
def test_decode_rejects(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_wav(data)


def test_decode_without_data_chunk_and_over_the_size_limit() -> None:
    data = wav_bytes(np.zeros(4, np.int16), 8000)
    without_data = data[: data.index(b"data")]
    with pytest.raises(ValueError, match="no 'data' chunk"):
        decode_wav(without_data)
    with pytest.raises(ValueError, match=f"WAV file is {len(data)} bytes; the limit is 20 bytes"):
        decode_wav(data, max_bytes=20)


def test_decode_the_shared_recordings() -> None:
    folder = SHARED_DATA / "same" / "valid"
    pcm16 = audio.read_wav(folder / "ZCZC-CIV-LEW-004013+1000-3032318-WOLFIP.wav")
    assert pcm16.sample_rate == 16000 and pcm16.samples.size > 16000
    floats = audio.read_wav(folder / "Same.wav")  # 32-bit float; the header says 96 kHz
    assert floats.sample_rate == 96000 and np.max(np.abs(floats.samples)) <= 1.0


# --- voice sources ----------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [8000, 48000])
def test_synthesize_speaks_text(rate: int) -> None:
    require_espeak()
    speech = voice.synthesize("This is a test of the Emergency Alert System.", rate)
    assert speech.dtype == np.float64
    assert 1.0 < speech.size / rate < 10.0
    assert np.max(np.abs(speech)) == pytest.approx(voice.PEAK)


def test_synthesize_text_that_looks_like_an_option() -> None:
    require_espeak()
    speech = voice.synthesize("--help -w /tmp/x.wav", 16000)
    assert speech.size > 0.3 * 16000


def test_synthesize_without_espeak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voice, "espeak_path", lambda: None)
    with pytest.raises(voice.SpeechUnavailable, match="espeak-ng is not installed"):
        voice.synthesize("hello", 8000)


def test_synthesize_when_espeak_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    false = shutil.which("false")
    assert false is not None
    monkeypatch.setattr(voice, "espeak_path", lambda: false)
    with pytest.raises(voice.SpeechUnavailable, match="espeak-ng failed with exit status 1"):
        voice.synthesize("hello", 8000)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("", 8000), {}, "text is empty"),
        (("   ", 8000), {}, "text is empty"),
        (("x" * 4001, 8000), {}, "text has 4001 characters"),
        (("a\x00b", 8000), {}, "NUL"),
        ((b"hello", 8000), {}, "text must be a str"),
        (("hello", 7000), {}, "sample_rate must be within"),
        (("hello", 8000), {"language": "en; rm"}, "language must be"),
        (("hello", 8000), {"volume": 201}, "volume must be 0-200"),
        (("hello", 8000), {"words_per_minute": 10}, "words_per_minute must be 80-450"),
    ],
)
def test_synthesize_bad_arguments(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        voice.synthesize(*args, **kwargs)  # type: ignore[arg-type]


def test_voice_from_wav() -> None:
    t = np.arange(8000) / 8000
    tone = (0.5 * np.sin(2 * np.pi * 500 * t) * 32767).astype(np.int16)
    samples = voice.from_wav(wav_bytes(np.stack([tone, tone], axis=1), 8000, channels=2), 44100)
    assert samples.size == 44100
    assert peak_frequencies(samples, 44100, 1) == [500]
    with pytest.raises(ValueError, match="voice lasts 121.0 s"):
        voice.from_wav(wav_bytes(np.zeros(121 * 4000, np.int16), 4000), 8000)
    with pytest.raises(ValueError, match="the limit is 100 bytes"):
        voice.from_wav(wav_bytes(tone, 8000), 8000, max_bytes=100)
    with pytest.raises(ValueError, match="WAV data must be bytes"):
        voice.from_wav("RIFF", 8000)  # type: ignore[arg-type]


def test_constants_follow_the_rules() -> None:
    assert audio.HEADER_REPEATS == 3 and audio.PAUSE_SECONDS == 1.0
    assert (audio.MIN_ATTENTION_SECONDS, audio.MAX_ATTENTION_SECONDS) == (8.0, 25.0)
    assert math.isclose(audio.RAMP_SECONDS, 0.005)
