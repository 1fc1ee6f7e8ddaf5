"""Airing outputs: where a message goes when it airs.

An output is anything with a ``name`` and a ``play(message)`` that returns once the message has
been played and raises :class:`OutputError` (with a message an operator can act on) when it
could not be. The airing loop (:func:`alertstation.eas.airing.onair.run_once`) plays each message
through every enabled output at once and waits for all of them:

* ``archive`` (always on): the message was archived when it was queued; playing checks that
  its WAV is still there.
* ``icecast`` (:mod:`.icecast`): a source client that streams the message as MP3 to a mount.
* ``alsa`` (:mod:`.alsa`): the local sound card through ``aplay``.
"""

from __future__ import annotations

import io
import logging
import wave
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from alertstation.eas.archive import AiredMessage

log = logging.getLogger("alertstation.eas")

__all__ = [
    "AiredMessage",
    "ArchiveOutput",
    "Output",
    "OutputError",
    "load_message",
    "play_all",
    "wav_bytes",
]


class OutputError(Exception):
    """An output could not play a message; the text says why, for the operator."""


class Output(Protocol):
    """Something a message airs through."""

    name: str

    def play(self, message: AiredMessage) -> None:
        """Play the whole message; raise OutputError when that fails."""
        ...


class ArchiveOutput:
    """The aired-message archive: always on; the message was archived when it was queued."""

    name = "archive"

    def __init__(self, wav_path: Path) -> None:
        self._path = wav_path

    def play(self, message: AiredMessage) -> None:
        """Check that the archived WAV is still there."""
        if not self._path.is_file():
            raise OutputError(f"the archived WAV {self._path.name} is missing")


def wav_bytes(message: AiredMessage) -> bytes:
    """Return a message as the bytes of a 16-bit mono WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(message.sample_rate)
        out.writeframes(message.samples.astype("<i2", copy=False).tobytes())
    return buffer.getvalue()


def load_message(path: Path, header: str) -> AiredMessage:
    """Read an archived WAV (16-bit mono PCM, as the archive writes it); OutputError if bad."""
    try:
        with wave.open(str(path), "rb") as source:
            if source.getnchannels() != 1 or source.getsampwidth() != 2:
                raise OutputError(f"the archived WAV {path.name} is not 16-bit mono PCM")
            rate = source.getframerate()
            frames = source.readframes(source.getnframes())
    except (OSError, EOFError, wave.Error) as ex:
        raise OutputError(f"the archived WAV {path.name} cannot be read: {ex}") from ex
    samples = np.frombuffer(frames, dtype="<i2").astype(np.int16)
    return AiredMessage(header, samples, rate)


def _play(output: Output, message: AiredMessage) -> dict[str, Any]:
    try:
        output.play(message)
    except OutputError as ex:
        log.error("EAS output %s failed: %s", output.name, ex)
        return {"ok": False, "error": str(ex)}
    except Exception as ex:  # a bug in an output must not stop the others or the queue
        log.exception("EAS output %s crashed", output.name)
        return {"ok": False, "error": f"{type(ex).__name__}: {ex}"}
    return {"ok": True}


def play_all(outputs: Sequence[Output], message: AiredMessage) -> dict[str, dict[str, Any]]:
    """Play ``message`` through every output at once; return each output's result by name."""
    if not outputs:
        return {}
    with ThreadPoolExecutor(len(outputs), thread_name_prefix="eas-output") as pool:
        futures = [(output.name, pool.submit(_play, output, message)) for output in outputs]
        return {name: future.result() for name, future in futures}
