"""Render a complete SAME/EAS message as int16 PCM, and read and write WAV files.

The message follows 47 CFR 11.31: three header bursts (16 preamble bytes 0xAB, then the
header) one second apart, the attention signal, the voice, and three end-of-message bursts
(preamble + ``NNNN``) one second apart. The AFSK and the tones come from
``alertstation.eas.kernels``; this module lays them out and converts to int16 once per segment.
"""

from __future__ import annotations

import math
import numbers
import struct
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from alertstation import lazy
from alertstation.eas import kernels
from alertstation.same import EOM_CODE, SameHeader

scipy_signal = lazy.module("scipy.signal")

Int16Array = npt.NDArray[np.int16]
Float64Array = npt.NDArray[np.float64]

MIN_SAMPLE_RATE: Final[int] = 8000
MAX_SAMPLE_RATE: Final[int] = 48000
HEADER_REPEATS: Final[int] = 3
PAUSE_SECONDS: Final[float] = 1.0  # between bursts, after the attention signal and the voice
MIN_ATTENTION_SECONDS: Final[float] = 8.0
MAX_ATTENTION_SECONDS: Final[float] = 25.0
RAMP_SECONDS: Final[float] = 0.005
MAX_VOICE_SECONDS: Final[float] = 120.0  # EAS decoders cut messages at two minutes
MAX_WAV_BYTES: Final[int] = 64 * 1024 * 1024
MIN_WAV_RATE: Final[int] = 4000
MAX_WAV_RATE: Final[int] = 384000
RESAMPLE_KAISER_BETA: Final[float] = 10.0  # anti-aliasing filter of resample()
PCM16_SCALE: Final[float] = 32768.0  # int16 sample x reads as x / 32768, so -32768 is -1.0

Attention = Literal["eas", "nwr"]
_TONES: Final[dict[str, tuple[float, ...]]] = {
    "eas": kernels.ATTENTION_HZ,
    "nwr": kernels.NWR_ATTENTION_HZ,
}


# --- message rendering ------------------------------------------------------------------------


def render_message(
    header: SameHeader | str,
    *,
    sample_rate: int = 44100,
    attention_seconds: float = 8.0,
    voice: npt.NDArray[np.generic] | bytes | None = None,
    include_eom: bool = True,
    attention: Attention = "eas",
    level: float = 0.8,
) -> Int16Array:
    """Render a whole message (headers, attention signal, voice, EOMs) as mono int16 PCM.

    ``header`` is a SameHeader or header text (validated; sent exactly as given).
    ``attention_seconds`` is 0 for no attention signal (a weekly test) or 8-25 s;
    ``attention="nwr"`` sends the 1050 Hz weather-radio tone instead of 853 + 960 Hz.
    ``voice`` is an int16 or float array at ``sample_rate`` or the bytes of a WAV file (any
    rate, mono or stereo). Tones, bursts and voice peak at ``level`` of full scale. Every
    burst is followed by one second of silence, the last one included.
    """
    text = _header_text(header)
    rate = _check_rate(sample_rate)
    amplitude = _check_level(level)
    tone_seconds = _check_attention_seconds(attention_seconds)
    if attention not in _TONES:
        raise ValueError(f"attention must be 'eas' or 'nwr', got {attention!r}")
    speech = None if voice is None else _voice_samples(voice, rate)

    pause = round(PAUSE_SECONDS * rate)
    header_burst, _ = kernels.afsk_modulate(
        kernels.encode_burst(text), sample_rate=rate, amplitude=amplitude
    )
    plan: list[npt.NDArray[np.float32] | Float64Array | int] = []
    for _ in range(HEADER_REPEATS):
        plan += [header_burst, pause]
    if tone_seconds:
        tone = kernels.attention_tone(
            tone_seconds, sample_rate=rate, frequencies=_TONES[attention], amplitude=amplitude
        )
        plan += [apply_ramps(tone, round(RAMP_SECONDS * rate)), pause]
    if speech is not None and speech.size:
        plan += [speech * amplitude, pause]
    if include_eom:
        eom_burst, _ = kernels.afsk_modulate(
            kernels.encode_burst(EOM_CODE), sample_rate=rate, amplitude=amplitude
        )
        for _ in range(HEADER_REPEATS):
            plan += [eom_burst, pause]
    return _assemble(plan)


def render_eom(*, sample_rate: int = 44100, level: float = 0.8) -> Int16Array:
    """Render the end of message alone: three ``NNNN`` bursts, each followed by one second.

    Stop sends it on every real output after cutting a message (47 CFR 11.31(c)).
    """
    rate = _check_rate(sample_rate)
    amplitude = _check_level(level)
    pause = round(PAUSE_SECONDS * rate)
    eom_burst, _ = kernels.afsk_modulate(
        kernels.encode_burst(EOM_CODE), sample_rate=rate, amplitude=amplitude
    )
    plan: list[npt.NDArray[np.float32] | Float64Array | int] = []
    for _ in range(HEADER_REPEATS):
        plan += [eom_burst, pause]
    return _assemble(plan)


def _assemble(plan: list[npt.NDArray[np.float32] | Float64Array | int]) -> Int16Array:
    """Convert each segment to int16 in place in one zeroed buffer; ints are silences."""
    total = sum(item if isinstance(item, int) else item.size for item in plan)
    out = np.zeros(total, dtype=np.int16)
    position = 0
    for item in plan:
        if isinstance(item, int):
            position += item
            continue
        out[position : position + item.size] = kernels.to_int16(item)
        position += item.size
    return out


def apply_ramps(samples: npt.NDArray[np.floating], ramp: int) -> npt.NDArray[np.floating]:
    """Fade ``samples`` in and out with raised-cosine ramps of ``ramp`` samples, in place."""
    ramp = min(ramp, samples.size // 2)
    if ramp > 0:
        window = 0.5 - 0.5 * np.cos(np.pi * (np.arange(ramp) + 0.5) / ramp)
        samples[:ramp] *= window.astype(samples.dtype)
        samples[samples.size - ramp :] *= window[::-1].astype(samples.dtype)
    return samples


def _header_text(header: object) -> str:
    """Return the header text to send, after checking it is a valid SAME header."""
    if isinstance(header, SameHeader):
        return header.encode()
    if isinstance(header, str):
        return SameHeader.parse(header).encode()
    raise ValueError(f"header must be a SameHeader or str, got {type(header).__name__}")


def _check_rate(sample_rate: object) -> int:
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Integral):
        raise ValueError(f"sample_rate must be an int, got {sample_rate!r}")
    if not MIN_SAMPLE_RATE <= int(sample_rate) <= MAX_SAMPLE_RATE:
        raise ValueError(
            f"sample_rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {sample_rate}"
        )
    return int(sample_rate)


def _check_level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise ValueError(f"level must be a number, got {level!r}")
    if not 0.0 < float(level) <= 1.0:
        raise ValueError(f"level must satisfy 0 < level <= 1, got {level!r}")
    return float(level)


def _check_attention_seconds(seconds: object) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise ValueError(f"attention_seconds must be a number, got {seconds!r}")
    value = float(seconds)
    if value != 0.0 and not MIN_ATTENTION_SECONDS <= value <= MAX_ATTENTION_SECONDS:
        raise ValueError(
            f"attention_seconds must be 0 (no attention signal) or within 8-25 s, got {seconds!r}"
        )
    return value


def _voice_samples(voice: object, sample_rate: int) -> Float64Array:
    """Return the voice as float64 in [-1, 1] at ``sample_rate``."""
    if isinstance(voice, bytes | bytearray | memoryview):
        decoded = decode_wav(bytes(voice))
        samples = resample(decoded.samples, decoded.sample_rate, sample_rate)
    elif isinstance(voice, np.ndarray):
        if voice.ndim != 1:
            raise ValueError(f"voice must be a 1-D (mono) array, got {voice.ndim} dimensions")
        if voice.dtype == np.int16:
            samples = voice.astype(np.float64) / PCM16_SCALE
        elif voice.dtype.kind == "f":
            samples = voice.astype(np.float64)
            if not np.all(np.isfinite(samples)):
                raise ValueError("voice holds NaN or infinite samples")
        else:
            raise ValueError(f"voice must be int16 or floating-point, got dtype {voice.dtype}")
    else:
        raise ValueError(f"voice must be a numpy array or WAV bytes, got {type(voice).__name__}")
    if samples.size > MAX_VOICE_SECONDS * sample_rate:
        raise ValueError(
            f"voice lasts {samples.size / sample_rate:.1f} s; the limit is {MAX_VOICE_SECONDS:g} s"
        )
    return samples


# --- resampling -------------------------------------------------------------------------------


def resample(samples: npt.ArrayLike, from_rate: int, to_rate: int) -> Float64Array:
    """Resample mono audio by polyphase filtering (``scipy.signal.resample_poly``); float64.

    The output has ``round(len(samples) * to_rate / from_rate)`` samples. The signal is taken
    as silent beyond its ends. The anti-aliasing filter is a Kaiser window with beta
    ``RESAMPLE_KAISER_BETA``: a 1 kHz tone comes through within 1e-5 and what the new rate
    cannot carry is cut below 1e-5.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"samples must be 1-D, got {x.ndim} dimensions")
    for name, rate in (("from_rate", from_rate), ("to_rate", to_rate)):
        if isinstance(rate, bool) or not isinstance(rate, numbers.Integral) or rate <= 0:
            raise ValueError(f"{name} must be a positive int, got {rate!r}")
    if from_rate == to_rate or x.size == 0:
        return x.copy()
    g = math.gcd(from_rate, to_rate)
    up, down = to_rate // g, from_rate // g
    resampled = scipy_signal.resample_poly(x, up, down, window=("kaiser", RESAMPLE_KAISER_BETA))
    return np.ascontiguousarray(resampled[: round(x.size * up / down)], dtype=np.float64)


# --- WAV files --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WavAudio:
    """Decoded WAV audio: mono float64 samples in [-1, 1] and their sample rate."""

    samples: Float64Array
    sample_rate: int


_PCM = 1
_IEEE_FLOAT = 3
_EXTENSIBLE = 0xFFFE


def decode_wav(data: bytes, *, max_bytes: int = MAX_WAV_BYTES) -> WavAudio:
    """Decode a RIFF/WAVE file of 16-bit PCM or 32-bit float, mono or stereo, to mono.

    Stereo is averaged to mono. Raises ValueError for anything else, for more than
    ``max_bytes`` bytes, for NaN or infinite float samples, and for a file without audio.
    """
    if len(data) > max_bytes:
        raise ValueError(f"WAV file is {len(data)} bytes; the limit is {max_bytes} bytes")
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file: expected a RIFF/WAVE header")
    fmt, payload = _wav_chunks(data)
    if fmt is None:
        raise ValueError("WAV file has no 'fmt ' chunk")
    if payload is None:
        raise ValueError("WAV file has no 'data' chunk")
    kind, channels, rate, bits = _wav_format(fmt)
    frame = channels * bits // 8
    usable = len(payload) - len(payload) % frame  # a writer cut short leaves a partial frame
    if kind == _PCM:
        pcm = np.frombuffer(payload[:usable], dtype="<i2").astype(np.float64) / PCM16_SCALE
    else:
        pcm = np.frombuffer(payload[:usable], dtype="<f4").astype(np.float64)
        if not np.all(np.isfinite(pcm)):
            raise ValueError("WAV file holds NaN or infinite float samples")
    if pcm.size == 0:
        raise ValueError("WAV file holds no audio")
    mono = pcm.reshape(-1, channels).mean(axis=1) if channels == 2 else pcm
    return WavAudio(mono, rate)


def _wav_chunks(data: bytes) -> tuple[bytes | None, bytes | None]:
    """Return the 'fmt ' and 'data' chunk bodies of a RIFF/WAVE file."""
    fmt = payload = None
    offset = 12
    while offset + 8 <= len(data) and (fmt is None or payload is None):
        chunk_id = data[offset : offset + 4]
        (size,) = struct.unpack_from("<I", data, offset + 4)
        body = data[offset + 8 : offset + 8 + size]  # a streamed file may claim more than it has
        if chunk_id == b"fmt ":
            fmt = body
        elif chunk_id == b"data":
            payload = body
        offset += 8 + size + (size & 1)
    return fmt, payload


def _wav_format(fmt: bytes) -> tuple[int, int, int, int]:
    """Return (format, channels, sample rate, bits) after checking they are supported."""
    if len(fmt) < 16:
        raise ValueError("WAV 'fmt ' chunk is too short")
    kind, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", fmt)
    if kind == _EXTENSIBLE and len(fmt) >= 26:
        (kind,) = struct.unpack_from("<H", fmt, 24)  # first two bytes of the sub-format GUID
    if (kind, bits) not in ((_PCM, 16), (_IEEE_FLOAT, 32)):
        raise ValueError(
            f"WAV encoding must be 16-bit PCM or 32-bit float, got format {kind} with {bits} bits"
        )
    if channels not in (1, 2):
        raise ValueError(f"WAV file must be mono or stereo, got {channels} channels")
    if not MIN_WAV_RATE <= rate <= MAX_WAV_RATE:
        raise ValueError(f"WAV sample rate must be {MIN_WAV_RATE}-{MAX_WAV_RATE} Hz, got {rate}")
    return kind, channels, rate, bits


def read_wav(path: str | Path, *, max_bytes: int = MAX_WAV_BYTES) -> WavAudio:
    """Read a WAV file (16-bit PCM or 32-bit float, mono or stereo) as mono float64."""
    file = Path(path)
    size = file.stat().st_size
    if size > max_bytes:
        raise ValueError(f"WAV file is {size} bytes; the limit is {max_bytes} bytes")
    return decode_wav(file.read_bytes(), max_bytes=max_bytes)


def write_wav(path: str | Path, samples: npt.NDArray[np.generic], sample_rate: int) -> None:
    """Write mono samples as a 16-bit PCM WAV file; float samples are converted to int16."""
    array = np.asarray(samples)
    if array.ndim != 1:
        raise ValueError(f"samples must be 1-D (mono), got {array.ndim} dimensions")
    if array.dtype != np.int16:
        array = kernels.to_int16(array)  # raises ValueError for non-float dtypes
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Integral):
        raise ValueError(f"sample_rate must be an int, got {sample_rate!r}")
    if not MIN_WAV_RATE <= sample_rate <= MAX_WAV_RATE:
        raise ValueError(f"sample_rate must be {MIN_WAV_RATE}-{MAX_WAV_RATE} Hz, got {sample_rate}")
    # Open the file first: a Wave_write that fails to open its own file warns when collected.
    with open(path, "wb") as handle, wave.open(handle, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(array.astype("<i2", copy=False).tobytes())
