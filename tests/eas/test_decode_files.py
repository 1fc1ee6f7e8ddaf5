"""Decoding real off-air recordings and audio files of every WAV flavour (and via ffmpeg)."""

from __future__ import annotations

import csv
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from alertstation.eas import kernels
from alertstation.eas.decode import SameStreamDecoder, decode_file, decode_pcm
from alertstation.eas.decode.audio_io import AudioFileError, read_audio
from tests.eas.test_decode_roundtrip import build_message
from tests.support import SHARED_DATA, pg_required

SAME_DIR = SHARED_DATA / "same"
HEADER = "ZCZC-WXR-TOR-039173-039051+0030-1241720-KCLE/NWS-"
EXPECTED = [HEADER, "NNNN"]
RATE = 16000


def recordings() -> list[tuple[str, str]]:
    """Return (relative file, expected header or '') rows of headers.tsv."""
    if not SAME_DIR.is_dir():
        if pg_required():
            pytest.fail(f"shared recordings missing: {SAME_DIR}")
        pytest.skip(f"shared recordings missing: {SAME_DIR}")
    with (SAME_DIR / "headers.tsv").open(newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [(row["file"], row["expected_header"]) for row in rows]


# --- real recordings --------------------------------------------------------------------------


def test_recordings_decode_exactly() -> None:
    rows = recordings()
    assert {name.split("/")[0] for name, _ in rows} == {"valid", "invalid-8n1"}
    assert any(header.endswith("WOLF/IP -") for _, header in rows)
    for name, header in rows:
        decoded = decode_file(SAME_DIR / name)
        if name.startswith("valid/"):
            assert [(d.kind, d.text, d.bursts) for d in decoded] == [
                ("header", header, 3),
                ("eom", "NNNN", 3),
            ], name
        else:
            assert header == "" and decoded == [], name


def test_recording_streamed_in_chunks_equals_whole() -> None:
    recordings()
    samples, rate = read_audio(SAME_DIR / "valid" / "Same.wav")
    decoder = SameStreamDecoder(rate)
    streamed = []
    for start in range(0, samples.size, 4093):
        streamed += decoder.feed(samples[start : start + 4093])
    assert streamed + decoder.flush() == decode_pcm(samples, rate)


# --- WAV flavours -----------------------------------------------------------------------------


def riff(*chunks: tuple[bytes, bytes], sizes: dict[bytes, int] | None = None) -> bytes:
    """Return a RIFF/WAVE image of the chunks (pad byte after odd ones; sizes may lie)."""
    body = b"WAVE"
    for chunk_id, payload in chunks:
        size = (sizes or {}).get(chunk_id, len(payload))
        body += chunk_id + struct.pack("<I", size) + payload + b"\0" * (len(payload) & 1)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def fmt_chunk(codec: int, channels: int, rate: int, bits: int, extensible: bool = False) -> bytes:
    width = (bits + 7) // 8
    tag = 0xFFFE if extensible else codec
    head = struct.pack(
        "<HHIIHH", tag, channels, rate, rate * channels * width, channels * width, bits
    )
    if not extensible:
        return head
    guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    return head + struct.pack("<HHIH", 22, bits, 0, codec) + guid_tail


def encode_samples(signal: np.ndarray, codec: int, bits: int) -> np.ndarray:
    """Return (frames, width) bytes of ``signal`` in a WAV sample format."""
    if codec == 3:
        return signal.astype("<f4" if bits == 32 else "<f8").view(np.uint8).reshape(signal.size, -1)
    if bits == 8:
        return (np.round(signal * 127) + 128).astype(np.uint8).reshape(-1, 1)
    full = np.round(signal.astype(np.float64) * (2 ** (bits - 1) - 1)).astype("<i4")
    return full.view(np.uint8).reshape(-1, 4)[:, : bits // 8]


def wav_bytes(
    signal: np.ndarray, *, codec: int = 1, bits: int = 16, channels: int = 1, **kw: bool
) -> bytes:
    first = encode_samples(signal, codec, bits)
    noise = np.random.default_rng(0).normal(0, 0.3, signal.size).clip(-1, 1)
    others = [encode_samples(noise.astype(np.float32), codec, bits)] * (channels - 1)
    frames = np.concatenate([first, *others], axis=1)
    fmt = fmt_chunk(codec, channels, RATE, bits, kw.get("extensible", False))
    return riff((b"fmt ", fmt), (b"LIST", b"INFOodd"), (b"data", frames.tobytes()))


@pytest.fixture(scope="module")
def message() -> np.ndarray:
    signal, _ = build_message(HEADER, RATE)
    return signal


@pytest.mark.parametrize(
    ("codec", "bits", "channels", "extensible"),
    [
        (1, 8, 1, False),
        (1, 16, 1, False),
        (1, 24, 1, False),
        (1, 32, 1, False),
        (3, 32, 1, False),
        (3, 64, 1, False),
        (1, 16, 2, False),
        (1, 24, 2, True),
        (3, 32, 3, True),
    ],
)
def test_wav_flavours(
    tmp_path: Path, message: np.ndarray, codec: int, bits: int, channels: int, extensible: bool
) -> None:
    path = tmp_path / "message.wav"
    path.write_bytes(
        wav_bytes(message, codec=codec, bits=bits, channels=channels, extensible=extensible)
    )
    samples, rate = read_audio(path)
    assert rate == RATE and samples.dtype == np.float32 and samples.shape == message.shape
    assert np.max(np.abs(samples - message)) < (2e-2 if bits == 8 else 1e-4)
    assert [d.text for d in decode_file(path)] == EXPECTED


def test_truncated_and_streamed_data_chunks(tmp_path: Path, message: np.ndarray) -> None:
    pcm = kernels.to_int16(message).tobytes()
    fmt = (b"fmt ", fmt_chunk(1, 1, RATE, 16))
    for sizes in ({b"data": len(pcm) * 2}, {b"data": 0xFFFFFFFF}):
        path = tmp_path / "cut.wav"
        # Half a frame after the samples (the helper's pad byte cut off again).
        path.write_bytes(riff(fmt, (b"data", pcm + b"\x01"), sizes=sizes)[:-1])
        samples, _ = read_audio(path)
        assert samples.size == message.size
        assert [d.text for d in decode_file(path)] == EXPECTED


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (riff((b"data", b"\0\0")), "no fmt chunk"),
        (riff((b"fmt ", fmt_chunk(1, 1, RATE, 16))), "no data chunk"),
        (riff((b"fmt ", b"\1\0\1\0"), (b"data", b"")), "shorter than 16"),
        (riff((b"fmt ", fmt_chunk(1, 1, RATE, 40)), (b"data", b"")), "40 bits"),
        (riff((b"fmt ", fmt_chunk(3, 1, RATE, 16)), (b"data", b"")), "float sample width"),
        (riff((b"fmt ", fmt_chunk(1, 1, RATE, 16)[:12] + b"\3\0\x10\0"), (b"data", b"")), "align"),
        (riff((b"fmt ", fmt_chunk(1, 1, RATE, 16, True)[:30]), (b"data", b"")), "EXTENSIBLE"),
        (riff((b"fmt ", fmt_chunk(1, 1, 4000, 16)), (b"data", b"\0\0" * 10)), "sample_rate"),
        (b"", "empty"),
    ],
)
def test_malformed_wav_files(tmp_path: Path, image: bytes, message: str) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(image)
    with pytest.raises(AudioFileError, match=message) as caught:
        decode_file(path)
    assert str(path) in str(caught.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        decode_file(tmp_path / "absent.wav")
    with pytest.raises(IsADirectoryError):
        decode_file(tmp_path)


# --- other formats through ffmpeg -------------------------------------------------------------


def test_without_ffmpeg_other_formats_get_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    mp3 = tmp_path / "alert.mp3"
    mp3.write_bytes(b"ID3\x04\0\0\0\0\0\0not really")
    alaw = tmp_path / "alaw.wav"
    alaw.write_bytes(riff((b"fmt ", fmt_chunk(6, 1, 8000, 8)), (b"data", b"\xd5" * 100)))
    for path in (mp3, alaw):
        with pytest.raises(AudioFileError, match="ffmpeg .* is not installed"):
            decode_file(path)


STUB = """#!{python}
import struct, sys
from pathlib import Path
Path({log!r}).write_text("\\n".join(sys.argv[1:]))
source = Path(sys.argv[sys.argv.index("-i") + 1].removeprefix("file:")).read_bytes()
if not source.startswith(b"FAKE"):
    sys.stderr.write("something\\n{{path}}: Invalid data found when processing input\\n")
    sys.exit(1)
rate, pcm = struct.unpack("<I", source[4:8])[0], source[8:]
fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
out = b"RIFF\\xff\\xff\\xff\\xffWAVEfmt " + struct.pack("<I", 16) + fmt
sys.stdout.buffer.write(out + b"data\\xff\\xff\\xff\\xff" + pcm)
"""


def test_other_formats_go_through_ffmpeg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: np.ndarray
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "argv.txt"
    stub = bin_dir / "ffmpeg"
    stub.write_text(STUB.format(python=sys.executable, log=str(log)))
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    fake = tmp_path / "-odd name.ogg"
    fake.write_bytes(b"FAKE" + struct.pack("<I", RATE) + kernels.to_int16(message).tobytes())
    assert [d.text for d in decode_file(fake)] == EXPECTED
    argv = log.read_text().split("\n")
    assert argv[0] == "-nostdin"
    assert argv[argv.index("-i") + 1] == f"file:{fake.resolve()}"
    assert argv[argv.index("-ac") : argv.index("-ac") + 4] == ["-ac", "1", "-c:a", "pcm_s16le"]
    assert argv[-3:] == ["-f", "wav", "-"]
    broken = tmp_path / "broken.mp3"
    broken.write_bytes(b"garbage")
    with pytest.raises(AudioFileError, match="ffmpeg could not read it: .*Invalid data"):
        decode_file(broken)


def test_real_ffmpeg_mp3(tmp_path: Path, message: np.ndarray) -> None:
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        if pg_required():
            pytest.fail("ffmpeg is required under make test (scripts/install-test-deps.sh)")
        pytest.skip("ffmpeg is not installed")
    wav = tmp_path / "message.wav"
    wav.write_bytes(wav_bytes(message))
    mp3 = tmp_path / "message.mp3"
    subprocess.run(
        [ffmpeg, "-nostdin", "-v", "error", "-i", str(wav), "-b:a", "64k", str(mp3)], check=True
    )
    assert [d.text for d in decode_file(mp3)] == EXPECTED
