"""Read audio files for the SAME decoder: WAV directly, every other format through ffmpeg.

WAV files are parsed here, chunk by chunk: integer PCM of 8 (unsigned), 16, 24 or 32 bits and
IEEE float of 32 or 64 bits, plain or WAVE_FORMAT_EXTENSIBLE, any number of channels (the first
is kept). A WAV holding another codec (A-law, ADPCM, ...) and any non-WAV file (MP3, FLAC, ...)
is converted by ``ffmpeg`` to 16-bit mono at the file's own rate.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

Float32Array = npt.NDArray[np.float32]

FORMAT_PCM: Final[int] = 0x0001
FORMAT_FLOAT: Final[int] = 0x0003
FORMAT_EXTENSIBLE: Final[int] = 0xFFFE
_UNKNOWN_SIZE: Final[int] = 0xFFFFFFFF


class AudioFileError(ValueError):
    """An audio file could not be read; the message names the file and the reason."""


class _NotNativeWav(Exception):
    """A RIFF/WAVE file whose codec this module does not read itself (ffmpeg may)."""


def _chunks(data: bytes | memoryview, streamed: bool) -> dict[bytes, tuple[int, int]]:
    """Return {chunk id: (offset, size)} for the first fmt and data chunks of a RIFF body."""
    found: dict[bytes, tuple[int, int]] = {}
    pos, end = 12, len(data)
    while pos + 8 <= end and not (b"fmt " in found and b"data" in found):
        chunk_id = bytes(data[pos : pos + 4])
        (size,) = struct.unpack_from("<I", data, pos + 4)
        body = pos + 8
        if chunk_id == b"data" and (streamed or size == _UNKNOWN_SIZE or body + size > end):
            size = end - body  # streamed or truncated: the samples run to the end of the file
        found.setdefault(chunk_id, (body, size))
        pos = body + size + (size & 1)
    return found


def _format(data: bytes | memoryview, offset: int, size: int) -> tuple[int, int, int, int, int]:
    """Return (codec, channels, rate, block align, bits per sample) from a fmt chunk."""
    if size < 16:
        raise AudioFileError("fmt chunk is shorter than 16 bytes")
    if offset + 16 > len(data):
        raise AudioFileError("fmt chunk runs past the end of the file")
    codec, channels, rate, _, block_align, bits = struct.unpack_from("<HHIIHH", data, offset)
    if codec == FORMAT_EXTENSIBLE:
        if size < 40:
            raise AudioFileError("WAVE_FORMAT_EXTENSIBLE fmt chunk is shorter than 40 bytes")
        if offset + 40 > len(data):
            raise AudioFileError("WAVE_FORMAT_EXTENSIBLE fmt chunk runs past the end of the file")
        (codec,) = struct.unpack_from("<H", data, offset + 24)  # first field of the GUID
    return codec, channels, rate, block_align, bits


def _to_float(raw: npt.NDArray[np.uint8], codec: int, width: int) -> Float32Array:
    """Convert little-endian samples (``width`` bytes each, one column) to float32."""
    if codec == FORMAT_FLOAT:
        with np.errstate(over="ignore"):
            return raw.view("<f4" if width == 4 else "<f8").astype(np.float32).ravel()
    if width == 1:
        return ((raw.astype(np.float32) - 128.0) / 128.0).ravel()
    if width == 3:
        wide = np.zeros((raw.shape[0], 4), dtype=np.uint8)
        wide[:, 1:] = raw  # the 24 bits at the top of an int32 keep the sign
        return (wide.view("<i4").astype(np.float32) / np.float32(2.0**31)).ravel()
    dtype = "<i2" if width == 2 else "<i4"
    return (raw.view(dtype).astype(np.float32) / np.float32(2.0 ** (8 * width - 1))).ravel()


def parse_wav(data: bytes | memoryview, *, streamed: bool = False) -> tuple[Float32Array, int]:
    """Return (first channel as float32 in [-1, 1], sample rate) of a RIFF/WAVE image.

    ``streamed`` reads the data chunk to the end whatever size it declares (ffmpeg writing to
    a pipe cannot fill it in). Raises AudioFileError for a malformed file.
    """
    if len(data) < 12 or bytes(data[:4]) != b"RIFF" or bytes(data[8:12]) != b"WAVE":
        raise AudioFileError("not a RIFF/WAVE file")
    found = _chunks(data, streamed)
    if b"fmt " not in found:
        raise AudioFileError("WAV file has no fmt chunk")
    if b"data" not in found:
        raise AudioFileError("WAV file has no data chunk")
    codec, channels, rate, block_align, bits = _format(data, *found[b"fmt "])
    if codec not in (FORMAT_PCM, FORMAT_FLOAT):
        raise _NotNativeWav(f"WAV codec 0x{codec:04X}")
    width = (bits + 7) // 8
    allowed = (4, 8) if codec == FORMAT_FLOAT else (1, 2, 3, 4)
    if width not in allowed:
        kind = "float" if codec == FORMAT_FLOAT else "PCM"
        raise AudioFileError(f"unsupported {kind} sample width of {bits} bits")
    if channels < 1 or block_align != channels * width:
        raise AudioFileError(
            f"inconsistent WAV format: {channels} channel(s) of {width} bytes, "
            f"block align {block_align}"
        )
    offset, size = found[b"data"]
    frames = size // block_align
    raw = np.frombuffer(data, dtype=np.uint8, count=frames * block_align, offset=offset)
    first = raw.reshape(frames, block_align)[:, :width]
    return _to_float(np.ascontiguousarray(first), codec, width), int(rate)


def _read_with_ffmpeg(path: Path) -> tuple[Float32Array, int]:
    """Convert any audio file ffmpeg reads to 16-bit mono WAV at its own rate, then parse it."""
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise AudioFileError(
            f"{path}: not a PCM or float WAV file, and ffmpeg (needed for other formats) "
            "is not installed"
        )
    command = [
        exe, "-nostdin", "-hide_banner", "-loglevel", "error",
        "-i", f"file:{path.resolve()}",
        "-map", "0:a:0", "-ac", "1", "-c:a", "pcm_s16le", "-map_metadata", "-1",
        "-f", "wav", "-",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, check=False)
    if result.returncode != 0 or not result.stdout:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[-1] if lines else f"exit status {result.returncode}"
        raise AudioFileError(f"{path}: ffmpeg could not read it: {reason}")
    try:
        return parse_wav(result.stdout, streamed=True)
    except (AudioFileError, _NotNativeWav) as ex:
        raise AudioFileError(f"{path}: unexpected ffmpeg output: {ex}") from None


def read_audio(path: str | os.PathLike[str]) -> tuple[Float32Array, int]:
    """Return (first channel as float32, sample rate) of an audio file.

    WAV files of integer PCM (8/16/24/32-bit) or IEEE float (32/64-bit) are read directly;
    other formats go through ffmpeg. Raises OSError when the file cannot be opened and
    AudioFileError (a ValueError) when its content cannot be decoded.
    """
    file = Path(path)
    with file.open("rb") as handle:
        data = handle.read()
    if not data:
        raise AudioFileError(f"{file}: the file is empty")
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        try:
            return parse_wav(data)
        except AudioFileError as ex:
            raise AudioFileError(f"{file}: {ex}") from None
        except _NotNativeWav:
            pass
    return _read_with_ffmpeg(file)
