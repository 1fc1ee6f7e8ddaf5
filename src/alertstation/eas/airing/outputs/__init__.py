"""Airing outputs: where a message goes when it airs.

An output is anything with a ``name`` and a ``play(message)`` that returns once the message has
been played and raises :class:`OutputError` (with a message an operator can act on) when it
could not be. The airing loop (:func:`alertstation.eas.airing.onair.run_once`) plays each message
through every enabled output at once and waits for all of them:

* ``archive`` (always on): the message was archived when it was queued; playing checks that
  its WAV is still there, or, for a live message, writes the audio that aired in its place.
* ``icecast`` (:mod:`.icecast`): a source client that streams the message as MP3 to a mount.
* ``alsa`` (:mod:`.alsa`): the local sound card through ``aplay``.

Icecast and ALSA are the real outputs: they put the message on the air. Each is built with an
:class:`AirControl`: ``shutdown`` (the worker stops: the output gives up, the item is
interrupted) and ``cut`` (an operator's Stop: the output cuts the message audio, then plays the
end of message, ``eom``, and returns). ``trace`` is told of each step (``audio_cut:<name>``,
``eom_sent:<name>``, and ``first_audio:<name>`` when its first audio goes out) for the log and
for tests that check the order of events.

A :class:`LiveMessage` (a national message relayed as it arrives, :mod:`..live`) is played the
same way, each output reading the live audio as it comes instead of a whole message.

Only the airing loop (:mod:`alertstation.eas.airing.onair`) plays outputs; every origin reaches
it through :func:`alertstation.eas.airing.broadcast.broadcast`.
"""

from __future__ import annotations

import io
import logging
import threading
import wave
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from alertstation.eas.airing.live import LiveAudio
from alertstation.eas.archive import AiredMessage

log = logging.getLogger("alertstation.eas")

__all__ = [
    "AirControl",
    "AiredMessage",
    "ArchiveOutput",
    "LiveMessage",
    "Output",
    "OutputError",
    "load_message",
    "play_all",
    "wav_bytes",
]


class OutputError(Exception):
    """An output could not play a message; the text says why, for the operator."""


def _no_trace(step: str) -> None:
    return None


@dataclass
class AirControl:
    """How the airing loop steers the outputs of one airing: shutdown, Stop, and the EOM."""

    shutdown: threading.Event = field(default_factory=threading.Event)
    cut: threading.Event = field(default_factory=threading.Event)
    eom: AiredMessage | None = None
    trace: Callable[[str], None] = _no_trace


@dataclass(frozen=True)
class LiveMessage:
    """A message whose audio is still arriving (a national message relayed live).

    Each output reads it once with :meth:`read`: the station's header and attention signal, the
    source's audio as it arrives, then the EOM; Stop and shutdown end the reading early.
    """

    header: str
    audio: LiveAudio

    @property
    def sample_rate(self) -> int:
        """Return the rate of the live audio."""
        return self.audio.sample_rate

    def read(self, name: str, control: AirControl) -> Iterator[np.ndarray]:
        """Yield the audio for output ``name`` until the end, a Stop or a shutdown."""

        def stop() -> bool:
            return control.cut.is_set() or control.shutdown.is_set()

        return self.audio.read(name, stop)


Message = AiredMessage | LiveMessage


class Output(Protocol):
    """Something a message airs through."""

    name: str

    def play(self, message: Message) -> None:
        """Play the whole message; raise OutputError when that fails."""
        ...


class ArchiveOutput:
    """The aired-message archive: always on; the message was archived when it was queued.

    A live message is archived as it airs: its audio is written to a new WAV that replaces the
    queued one when the message ends (with the EOM after a Stop, as the real outputs send it).
    """

    name = "archive"

    def __init__(self, wav_path: Path, *, control: AirControl | None = None) -> None:
        self._path = wav_path
        self._control = control or AirControl()

    def play(self, message: Message) -> None:
        """Check that the archived WAV is still there; write a live message's audio."""
        if isinstance(message, LiveMessage):
            self._record(message)
        elif not self._path.is_file():
            raise OutputError(f"the archived WAV {self._path.name} is missing")

    def _record(self, message: LiveMessage) -> None:
        control = self._control
        partial = self._path.with_name(self._path.name + ".part")
        try:
            with wave.open(str(partial), "wb") as out:
                out.setnchannels(1)
                out.setsampwidth(2)
                out.setframerate(message.sample_rate)
                for chunk in message.read(self.name, control):
                    out.writeframes(chunk.astype("<i2", copy=False).tobytes())
                if control.cut.is_set() and control.eom is not None:
                    out.writeframes(control.eom.samples.astype("<i2", copy=False).tobytes())
            partial.replace(self._path)
        except OSError as ex:
            partial.unlink(missing_ok=True)
            raise OutputError(f"the live audio could not be archived: {ex}") from ex


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


def _play(output: Output, message: Message, clock: Callable[[], datetime] | None) -> dict[str, Any]:
    started = clock() if clock else None
    result: dict[str, Any] = {"ok": True, "error": None}
    try:
        output.play(message)
    except OutputError as ex:
        log.error("EAS output %s failed: %s", output.name, ex)
        result = {"ok": False, "error": str(ex)}
    except Exception as ex:  # a bug in an output must not stop the others or the queue
        log.exception("EAS output %s crashed", output.name)
        result = {"ok": False, "error": f"{type(ex).__name__}: {ex}"}
    if clock is not None:
        result.update(started_at=started, ended_at=clock())
    return result


def play_all(
    outputs: Sequence[Output],
    message: Message,
    *,
    clock: Callable[[], datetime] | None = None,
) -> dict[str, dict[str, Any]]:
    """Play ``message`` through every output at once; return each output's result by name.

    A result is ``{"ok", "error"}``, with ``started_at`` and ``ended_at`` when a ``clock`` is
    given.
    """
    if not outputs:
        return {}
    with ThreadPoolExecutor(len(outputs), thread_name_prefix="eas-output") as pool:
        futures = [(output.name, pool.submit(_play, output, message, clock)) for output in outputs]
        return {name: future.result() for name, future in futures}
