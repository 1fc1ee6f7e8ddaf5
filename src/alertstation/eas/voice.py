"""Produce the voice segment of a message: speech from text (espeak-ng) or an uploaded WAV.

Both return mono float64 samples in [-1, 1] at the requested rate, ready for
``alertstation.eas.audio.render_message(voice=...)``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from alertstation.eas.audio import (
    MAX_SAMPLE_RATE,
    MAX_VOICE_SECONDS,
    MAX_WAV_BYTES,
    MIN_SAMPLE_RATE,
    decode_wav,
    resample,
)

Float64Array = npt.NDArray[np.float64]

ESPEAK: Final[str] = "espeak-ng"
MAX_TEXT_CHARS: Final[int] = 4000
SPEAK_TIMEOUT_SECONDS: Final[float] = 120.0
PEAK: Final[float] = 0.98  # synthesised speech is normalised to this peak


class SpeechUnavailable(RuntimeError):
    """The espeak-ng program is not installed or could not produce speech."""


def _check_rate(sample_rate: int) -> int:
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int):
        raise ValueError(f"sample_rate must be an int, got {sample_rate!r}")
    if not MIN_SAMPLE_RATE <= sample_rate <= MAX_SAMPLE_RATE:
        raise ValueError(
            f"sample_rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {sample_rate}"
        )
    return sample_rate


def _check_text(text: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"text has {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
    if "\x00" in text:
        raise ValueError("text contains a NUL character")
    return text


def espeak_path() -> str | None:
    """Return the path of the espeak-ng program, or None when it is not installed."""
    return shutil.which(ESPEAK)


def synthesize(
    text: str, sample_rate: int = 44100, *, language: str = "en-us", words_per_minute: int = 160
) -> Float64Array:
    """Speak ``text`` with espeak-ng; return mono float64 at ``sample_rate``, peak 0.98.

    The text goes to espeak-ng on standard input (never through a shell, never parsed as an
    option); espeak-ng writes a temporary WAV that is read back and resampled. Raises
    SpeechUnavailable when espeak-ng is missing or fails, ValueError for bad arguments or
    speech longer than two minutes.
    """
    rate = _check_rate(sample_rate)
    _check_text(text)
    if not language.replace("-", "").isalnum():
        raise ValueError(f"language must be an espeak-ng voice name like 'en-us', got {language!r}")
    if isinstance(words_per_minute, bool) or not 80 <= words_per_minute <= 450:
        raise ValueError(f"words_per_minute must be 80-450, got {words_per_minute!r}")
    program = espeak_path()
    if program is None:
        raise SpeechUnavailable(
            "espeak-ng is not installed; install the Debian package espeak-ng "
            "(scripts/install-test-deps.sh does) or upload a WAV file instead"
        )
    handle, name = tempfile.mkstemp(prefix="alertstation-voice-", suffix=".wav")
    os.close(handle)
    wav_path = Path(name)
    try:
        command = [program, "-v", language, "-s", str(words_per_minute), "-b", "1"]
        command += ["-w", str(wav_path), "--stdin"]
        try:
            result = subprocess.run(
                command,
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=SPEAK_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as ex:
            raise SpeechUnavailable(f"espeak-ng could not run: {ex}") from ex
        if result.returncode != 0:
            detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SpeechUnavailable(
                f"espeak-ng failed with exit status {result.returncode}"
                + (f": {detail[-1]}" if detail else "")
            )
        try:
            spoken = decode_wav(wav_path.read_bytes())
        except ValueError as ex:
            raise SpeechUnavailable(f"espeak-ng wrote an unreadable WAV: {ex}") from ex
    finally:
        wav_path.unlink(missing_ok=True)
    samples = resample(spoken.samples, spoken.sample_rate, rate)
    _check_duration(samples, rate)
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    return samples * (PEAK / peak) if peak > 0 else samples


def from_wav(
    data: bytes, sample_rate: int = 44100, *, max_bytes: int = MAX_WAV_BYTES
) -> Float64Array:
    """Validate uploaded WAV bytes and return them as mono float64 at ``sample_rate``.

    Accepts RIFF/WAVE with 16-bit PCM or 32-bit float samples, mono or stereo (averaged),
    at any rate from 4 to 384 kHz (resampled). Raises ValueError for anything else, for a file
    over ``max_bytes`` or for audio longer than two minutes. The level is left as recorded.
    """
    rate = _check_rate(sample_rate)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"WAV data must be bytes, got {type(data).__name__}")
    decoded = decode_wav(bytes(data), max_bytes=max_bytes)
    _check_duration(decoded.samples, decoded.sample_rate)
    return resample(decoded.samples, decoded.sample_rate, rate)


def _check_duration(samples: Float64Array, sample_rate: int) -> None:
    seconds = samples.size / sample_rate
    if seconds > MAX_VOICE_SECONDS:
        raise ValueError(f"voice lasts {seconds:.1f} s; the limit is {MAX_VOICE_SECONDS:g} s")
