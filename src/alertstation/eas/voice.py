"""Produce the voice segment of a message: speech from text (espeak-ng) or an uploaded WAV.

Both return mono float64 samples in [-1, 1] at the requested rate, ready for
``alertstation.eas.audio.render_message(voice=...)``. Aired speech uses the voice, rate and
volume saved on the settings page (:func:`saved_voice`, then :func:`speak`); every espeak-ng run,
the settings page's preview included, goes through :func:`espeak_wav`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from alertstation.eas.audio import (
    MAX_SAMPLE_RATE,
    MAX_VOICE_SECONDS,
    MAX_WAV_BYTES,
    MIN_SAMPLE_RATE,
    decode_wav,
    resample,
)
from alertstation.settings_admin.sections import tts_settings

Float64Array = npt.NDArray[np.float64]

ESPEAK: Final[str] = "espeak-ng"
MAX_TEXT_CHARS: Final[int] = 4000
SPEAK_TIMEOUT_SECONDS: Final[float] = 120.0
PEAK: Final[float] = 0.98  # synthesised speech at volume 100 is normalised to this peak
MIN_WORDS_PER_MINUTE: Final[int] = 80
MAX_WORDS_PER_MINUTE: Final[int] = 450
MAX_VOLUME: Final[int] = 200
WAV_HEADER_BYTES: Final[int] = 44
_VOICE_NAME: Final[re.Pattern[str]] = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]{0,39}$")


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


@dataclass(frozen=True)
class VoiceSettings:
    """How espeak-ng speaks: voice name, rate (words per minute) and volume (0-200, 100 normal).

    The station's saved values come from :func:`saved_voice`; the defaults are espeak-ng's own.
    """

    voice: str = "en-us"
    rate: int = 160
    volume: int = 100

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> VoiceSettings:
        """Build from a mapping with ``voice``, ``rate`` and ``volume`` (the saved section)."""
        return cls(str(values["voice"]), int(values["rate"]), int(values["volume"]))

    def check(self) -> VoiceSettings:
        """Return self; ValueError naming the argument that espeak-ng must not be given."""
        if not isinstance(self.voice, str) or not _VOICE_NAME.match(self.voice):
            raise ValueError(
                f"language must be an espeak-ng voice name like 'en-us', got {self.voice!r}"
            )
        if (
            isinstance(self.rate, bool)
            or not isinstance(self.rate, int)
            or not (MIN_WORDS_PER_MINUTE <= self.rate <= MAX_WORDS_PER_MINUTE)
        ):
            raise ValueError(
                f"words_per_minute must be {MIN_WORDS_PER_MINUTE}-{MAX_WORDS_PER_MINUTE}, "
                f"got {self.rate!r}"
            )
        if (
            isinstance(self.volume, bool)
            or not isinstance(self.volume, int)
            or not (0 <= self.volume <= MAX_VOLUME)
        ):
            raise ValueError(f"volume must be 0-{MAX_VOLUME}, got {self.volume!r}")
        return self


DEFAULT_VOICE: Final[VoiceSettings] = VoiceSettings()


def saved_voice(conn: Connection) -> VoiceSettings:
    """Return the voice, rate and volume saved on the settings page (the defaults until saved)."""
    return VoiceSettings.from_values(tts_settings(conn))


def espeak_wav(
    text: str, speaker: VoiceSettings, *, timeout: float = SPEAK_TIMEOUT_SECONDS
) -> bytes:
    """Speak ``text`` with espeak-ng in ``speaker``'s voice, rate and volume; return WAV bytes.

    The one place the station runs espeak-ng: aired speech (:func:`synthesize`) and the settings
    page's preview both come through here. The text goes on standard input, never through a
    shell or as an option. SpeechUnavailable when espeak-ng is missing or fails (an unknown
    voice); ValueError for bad settings.
    """
    speaker.check()
    program = espeak_path()
    if program is None:
        raise SpeechUnavailable(
            "espeak-ng is not installed; install the Debian package espeak-ng "
            "(scripts/install-test-deps.sh does) or upload a WAV file instead"
        )
    with tempfile.TemporaryDirectory(prefix="alertstation-voice-") as folder:
        wav_path = Path(folder) / "speech.wav"
        command = [program, "-v", speaker.voice, "-s", str(speaker.rate)]
        command += ["-a", str(speaker.volume), "-b", "1", "-w", str(wav_path), "--stdin"]
        try:
            result = subprocess.run(
                command,
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as ex:
            raise SpeechUnavailable(f"espeak-ng could not run: {ex}") from ex
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        written = wav_path.stat().st_size if wav_path.exists() else 0
        if result.returncode != 0 or written <= WAV_HEADER_BYTES:
            raise SpeechUnavailable(
                f"espeak-ng failed with exit status {result.returncode} "
                f"speaking with voice {speaker.voice!r}" + (f": {detail[-1]}" if detail else "")
            )
        return wav_path.read_bytes()


def synthesize(
    text: str,
    sample_rate: int = 44100,
    *,
    language: str = DEFAULT_VOICE.voice,
    words_per_minute: int = DEFAULT_VOICE.rate,
    volume: int = DEFAULT_VOICE.volume,
) -> Float64Array:
    """Speak ``text`` with espeak-ng; return mono float64 at ``sample_rate``.

    Speech is normalised to peak 0.98 at volume 100 and above; below 100 the peak scales down
    with the volume (50 gives 0.49). Runs :func:`espeak_wav`; raises SpeechUnavailable when
    espeak-ng is missing or fails, ValueError for bad arguments or speech longer than two
    minutes.
    """
    rate = _check_rate(sample_rate)
    _check_text(text)
    speaker = VoiceSettings(language, words_per_minute, volume).check()
    try:
        spoken = decode_wav(espeak_wav(text, speaker))
    except ValueError as ex:
        raise SpeechUnavailable(f"espeak-ng wrote an unreadable WAV: {ex}") from ex
    samples = resample(spoken.samples, spoken.sample_rate, rate)
    _check_duration(samples, rate)
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    target = PEAK * min(speaker.volume, 100) / 100
    return samples * (target / peak) if peak > 0 else samples


def speak(speaker: VoiceSettings, text: str, sample_rate: int) -> Float64Array:
    """Speak ``text`` in ``speaker``'s voice, rate and volume (:func:`synthesize`).

    Aired messages pass :func:`saved_voice`, read before the (slow) synthesis.
    """
    return synthesize(
        text,
        sample_rate,
        language=speaker.voice,
        words_per_minute=speaker.rate,
        volume=speaker.volume,
    )


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
