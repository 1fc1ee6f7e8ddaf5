"""Render a short text-to-speech preview with espeak-ng in the saved voice, rate and volume."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any, Final

from alertstation.eas.voice import ESPEAK, SpeechUnavailable, VoiceSettings, espeak_wav

PREVIEW_TEXT: Final[str] = "This is a test of the Alert Station text to speech voice."
MAX_PREVIEW_CHARS: Final[int] = 300
TIMEOUT_SECONDS: Final[float] = 30.0


def render_preview(settings: dict[str, Any], text: str = PREVIEW_TEXT) -> bytes:
    """Return a WAV of ``text`` spoken with ``settings`` (voice, rate, volume).

    Runs the same espeak-ng call as aired speech (``alertstation.eas.voice.espeak_wav``).
    ValueError for empty or long text; SpeechUnavailable when espeak-ng is missing or fails
    (an unknown voice).
    """
    text = text.strip()
    if not text or len(text) > MAX_PREVIEW_CHARS:
        raise ValueError(f"preview text must be 1-{MAX_PREVIEW_CHARS} characters")
    speaker = VoiceSettings.from_values(settings)
    return espeak_wav(text, speaker, timeout=TIMEOUT_SECONDS)


def list_voices() -> list[str]:
    """Return the espeak-ng voice names installed here ([] without espeak-ng)."""
    program = shutil.which(ESPEAK)
    if program is None:
        return []
    try:
        result = subprocess.run(
            [program, "--voices"], capture_output=True, timeout=TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    voices = []
    for line in result.stdout.decode("utf-8", "replace").splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 2:
            voices.append(columns[1])
    return sorted(set(voices))


__all__ = [
    "ESPEAK",
    "MAX_PREVIEW_CHARS",
    "PREVIEW_TEXT",
    "SpeechUnavailable",
    "list_voices",
    "render_preview",
]
