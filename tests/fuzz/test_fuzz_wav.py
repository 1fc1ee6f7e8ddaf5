"""Fuzz the WAV readers: the voice upload's ``decode_wav`` and the SAME decoder's ``parse_wav``.

Samples are small real WAV images written by the stdlib ``wave`` module (16-bit PCM mono and
stereo) and by hand (32-bit float, WAVE_FORMAT_EXTENSIBLE, 24-bit, 8-bit). Mutations hit the
RIFF/fmt/data headers as well as the samples, including extreme chunk sizes; chunk lists are
also built from scratch in any order and with any declared sizes. The answer is audio or a
ValueError (``AudioFileError`` for the decoder), nothing else. ``parse_wav`` may also hand a
file it does not decode itself to ffmpeg by raising its private ``_NotNativeWav``: that is its
documented hand-off to ``read_audio``, so it counts as an answer.
"""

from __future__ import annotations

import io
import struct
import wave

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from alertstation.eas.audio import decode_wav
from alertstation.eas.decode.audio_io import AudioFileError, _NotNativeWav, parse_wav
from alertstation.eas.voice import from_wav
from tests.fuzz.fuzzing import fuzz, mutated


def _stdlib_wav(channels: int, rate: int, frames: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        tone = (np.sin(np.arange(frames * channels) / 3.0) * 12000).astype("<i2")
        out.writeframes(tone.tobytes())
    return buffer.getvalue()


def _riff(chunks: list[tuple[bytes, bytes]], declared: dict[int, int] | None = None) -> bytes:
    body = b"WAVE"
    for index, (chunk_id, payload) in enumerate(chunks):
        size = (declared or {}).get(index, len(payload))
        body += (
            chunk_id + struct.pack("<I", size) + payload + (b"\x00" if len(payload) & 1 else b"")
        )
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _fmt(codec: int, channels: int, rate: int, bits: int, extensible: int | None = None) -> bytes:
    width = (bits + 7) // 8
    block = (channels * width) & 0xFFFF
    core = struct.pack("<HHIIHH", codec, channels, rate, (rate * block) & 0xFFFFFFFF, block, bits)
    if extensible is None:
        return core
    return core + struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", extensible) + b"\x00" * 14


SAMPLES = {
    "pcm16-mono": _stdlib_wav(1, 8000, 64),
    "pcm16-stereo": _stdlib_wav(2, 22050, 32),
    "float32": _riff(
        [(b"fmt ", _fmt(3, 1, 8000, 32)), (b"data", np.linspace(-1, 1, 40, dtype="<f4").tobytes())]
    ),
    "extensible": _riff(
        [(b"fmt ", _fmt(0xFFFE, 1, 8000, 16, extensible=1)), (b"data", b"\x01\x02" * 30)]
    ),
    "pcm24": _riff([(b"fmt ", _fmt(1, 1, 8000, 24)), (b"data", b"\x00\x10\x80" * 20)]),
    "pcm8": _riff(
        [(b"LIST", b"INFOjunk"), (b"fmt ", _fmt(1, 2, 8000, 8)), (b"data", b"\x80" * 40)]
    ),
}


def _read(data: bytes) -> None:
    try:
        decoded = decode_wav(data)
    except ValueError as ex:
        assert str(ex)
    else:
        assert decoded.samples.ndim == 1 and decoded.samples.size > 0 and decoded.sample_rate > 0
        assert np.all(np.isfinite(decoded.samples))
    try:
        from_wav(data, 8000)
    except ValueError as ex:
        assert str(ex)


def _read_for_the_decoder(data: bytes) -> None:
    try:
        samples, rate = parse_wav(data)
    except (AudioFileError, _NotNativeWav) as ex:
        assert str(ex)
    else:
        assert samples.dtype == np.float32 and samples.ndim == 1 and isinstance(rate, int)
    try:
        parse_wav(memoryview(data), streamed=True)
    except (AudioFileError, _NotNativeWav):
        pass


def _mutated_sample(data: st.DataObject) -> bytes:
    sample = SAMPLES[data.draw(st.sampled_from(sorted(SAMPLES)))]
    return data.draw(mutated(sample, protect=data.draw(st.sampled_from([0, 12])), most=3))


CHUNK_IDS = st.sampled_from([b"fmt ", b"data", b"LIST", b"fact", b"\x00\x00\x00\x00"])
FMT_PAYLOADS = st.builds(
    _fmt,
    st.sampled_from([0, 1, 3, 6, 0x11, 0xFFFE]),
    st.integers(0, 9),
    st.sampled_from([0, 1, 4000, 8000, 384000, 0xFFFFFFFF]),
    st.sampled_from([0, 1, 8, 12, 16, 24, 32, 64, 0xFFFF]),
    st.none() | st.sampled_from([1, 3, 6]),
)
CHUNK_LISTS = st.lists(
    st.tuples(CHUNK_IDS, FMT_PAYLOADS | st.binary(max_size=48)), min_size=0, max_size=4
)
DECLARED_SIZES = st.dictionaries(
    st.integers(0, 3), st.sampled_from([0, 1, 15, 16, 39, 0x7FFFFFFF, 0xFFFFFFFF]), max_size=2
)
# A fmt chunk that claims 16 bytes where the file ends sooner (last, or the only chunk).
SHORT_FMT_LAST = ([(b"data", b"\x00" * 8), (b"fmt ", b"\x01\x00\x01\x00")], {1: 16})
SHORT_FMT_ONLY = ([(b"fmt ", b"\x01\x00")], {0: 16})


@fuzz(80)
@given(data=st.data())
def test_uploaded_mutated_wavs_decode_or_fail_with_value_error(data: st.DataObject) -> None:
    _read(_mutated_sample(data))


@fuzz(80)
@given(chunks=CHUNK_LISTS, sizes=DECLARED_SIZES)
@example(*SHORT_FMT_LAST)
@example(*SHORT_FMT_ONLY)
def test_uploaded_chunk_lists_decode_or_fail_with_value_error(
    chunks: list[tuple[bytes, bytes]], sizes: dict[int, int]
) -> None:
    _read(_riff(chunks, sizes))


@fuzz(80)
@given(data=st.data(), chunks=CHUNK_LISTS, sizes=DECLARED_SIZES)
@example(data=None, chunks=SHORT_FMT_LAST[0], sizes=SHORT_FMT_LAST[1])
@example(data=None, chunks=SHORT_FMT_ONLY[0], sizes=SHORT_FMT_ONLY[1])
def test_decoder_wavs_decode_or_fail_with_audio_file_error(
    data: st.DataObject | None, chunks: list[tuple[bytes, bytes]], sizes: dict[int, int]
) -> None:
    _read_for_the_decoder(_riff(chunks, sizes))
    if data is not None:
        _read_for_the_decoder(_mutated_sample(data))
