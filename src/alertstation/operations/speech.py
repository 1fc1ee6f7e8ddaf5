"""Render a short text-to-speech preview with espeak-ng in the saved voice, rate and volume."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Final

ESPEAK: Final[str] = "espeak-ng"
PREVIEW_TEXT: Final[str] = "This is a test of the Alert Station text to speech voice."
MAX_PREVIEW_CHARS: Final[int] = 300
TIMEOUT_SECONDS: Final[float] = 30.0


class SpeechUnavailable(RuntimeError):
    """espeak-ng is missing or could not speak."""


def render_preview(settings: dict[str, Any], text: str = PREVIEW_TEXT) -> bytes:
    """Return a WAV of ``text`` spoken with ``settings`` (voice, rate, volume).

    The text goes on standard input, never through a shell or as an option. ValueError for
    empty or long text; SpeechUnavailable when espeak-ng is missing or fails (an unknown voice).
    """
    text = text.strip()
    if not text or len(text) > MAX_PREVIEW_CHARS:
        raise ValueError(f"preview text must be 1-{MAX_PREVIEW_CHARS} characters")
    program = shutil.which(ESPEAK)
    if program is None:
        raise SpeechUnavailable("espeak-ng is not installed (Debian package espeak-ng)")
    with tempfile.TemporaryDirectory(prefix="alertstation-tts-") as folder:
        wav = Path(folder) / "preview.wav"
        command = [program, "-v", str(settings["voice"]), "-s", str(int(settings["rate"]))]
        command += ["-a", str(int(settings["volume"])), "-b", "1", "-w", str(wav), "--stdin"]
        try:
            result = subprocess.run(
                command,
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as ex:
            raise SpeechUnavailable(f"espeak-ng could not run: {ex}") from ex
        detail = result.stderr.decode("utf-8", "replace").strip()
        if result.returncode != 0 or not wav.exists() or wav.stat().st_size <= 44:
            raise SpeechUnavailable(
                f"espeak-ng could not speak with voice {settings['voice']!r}"
                + (f": {detail.splitlines()[-1]}" if detail else "")
            )
        return wav.read_bytes()


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
