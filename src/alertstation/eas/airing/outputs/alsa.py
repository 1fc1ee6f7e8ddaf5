"""The local sound card: play each message through ALSA's ``aplay``.

``aplay -q -D <device> -t wav -`` gets the message as a 16-bit mono WAV on standard input (no
shell, no temporary file). A non-zero exit is an error carrying aplay's last words; a message
that has not finished long after its own length is stopped and reported. On Stop (the air
control's ``cut``) aplay is killed at once and the end of message is played after it.

A live message (a national message relayed as it arrives) goes to aplay as raw 16-bit PCM
(``-t raw -f S16_LE -c 1 -r <rate>``), written as it comes.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from typing import IO, Final

import numpy as np

from alertstation.eas.airing.live import MAX_SECONDS
from alertstation.eas.airing.outputs import (
    AirControl,
    LiveMessage,
    Message,
    OutputError,
    wav_bytes,
)

GRACE_SECONDS: Final[float] = 30.0
POLL_SECONDS: Final[float] = 0.05
#: Held while aplay has the device open in this process: a message, or the output-health check
#: (which gives way, :mod:`.health`), so the two never open the sound card at the same moment.
DEVICE_LOCK: Final[threading.Lock] = threading.Lock()


class AlsaOutput:
    """Play messages on an ALSA device (``default``, ``hw:0,0``, ``plughw:CARD=PCH`` …)."""

    name = "alsa"

    def __init__(
        self,
        device: str,
        *,
        cancel: threading.Event | None = None,
        control: AirControl | None = None,
        aplay: str | None = None,
    ) -> None:
        if not device or device.startswith("-"):
            raise ValueError(f"alsa device: {device!r} is not a device name")
        self.device = device
        self._control = control or AirControl(shutdown=cancel or threading.Event())
        self._aplay = aplay

    def command(self, program: str) -> list[str]:
        """Return the aplay command line for this device."""
        return [program, "-q", "-D", self.device, "-t", "wav", "-"]

    def raw_command(self, program: str, sample_rate: int) -> list[str]:
        """Return the aplay command line for raw mono 16-bit PCM at ``sample_rate``."""
        return [program, "-q", "-D", self.device, "-t", "raw", "-f", "S16_LE", "-c", "1"] + [
            "-r",
            str(int(sample_rate)),
            "-",
        ]

    def play(self, message: Message) -> None:
        """Play ``message`` to the end; OutputError when aplay is missing or fails.

        On Stop the message is cut and the end of message played in its place.
        """
        program = self._aplay or shutil.which("aplay")
        if program is None:
            raise OutputError("aplay is not installed (Debian package alsa-utils)")
        control = self._control
        if control.cut.is_set() or self._run(program, message, cuttable=True):
            control.trace(f"audio_cut:{self.name}")
            if control.eom is not None:
                self._run(program, control.eom, cuttable=False)
                control.trace(f"eom_sent:{self.name}")

    def _run(self, program: str, message: Message, *, cuttable: bool) -> bool:
        """Play ``message`` with aplay; True when Stop cut it."""
        with DEVICE_LOCK:
            return self._run_locked(program, message, cuttable=cuttable)

    def _run_locked(self, program: str, message: Message, *, cuttable: bool) -> bool:
        data: bytes | Iterable[bytes]
        if isinstance(message, LiveMessage):
            data = _pcm(message.read(self.name, self._control))
            command = self.raw_command(program, message.sample_rate)
            longest = MAX_SECONDS + message.audio.prefix.size / message.sample_rate
        else:
            data = wav_bytes(message)
            command = self.command(program)
            longest = message.duration
        cut = False
        deadline = time.monotonic() + longest + GRACE_SECONDS
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                )
            except OSError as ex:
                raise OutputError(f"aplay could not start: {ex}") from ex
            assert process.stdin is not None
            if cuttable:
                self._control.trace(f"first_audio:{self.name}")
            writer = threading.Thread(target=_feed, args=(process.stdin, data), daemon=True)
            writer.start()
            stopped = ""
            while process.poll() is None:
                if self._control.shutdown.wait(POLL_SECONDS):
                    stopped = "stopped: the worker is shutting down"
                elif cuttable and self._control.cut.is_set():
                    cut = True
                    process.kill()
                    process.wait()
                    break
                elif time.monotonic() > deadline:
                    stopped = f"aplay did not finish within {longest + GRACE_SECONDS:.0f} s"
                if stopped:
                    process.kill()
                    process.wait()
                    break
            writer.join(timeout=5)
            if stopped:
                raise OutputError(stopped)
            if cut:
                return True
            if process.returncode != 0:
                errors.seek(0)
                detail = errors.read().decode("utf-8", "replace").strip()[-300:]
                raise OutputError(
                    f"aplay -D {self.device} failed (exit {process.returncode}): "
                    f"{detail or 'no message'}"
                )
        return False


def _pcm(chunks: Iterable[np.ndarray]) -> Iterator[bytes]:
    for chunk in chunks:
        yield chunk.astype("<i2", copy=False).tobytes()


def _feed(stdin: IO[bytes], data: bytes | Iterable[bytes]) -> None:
    try:
        if isinstance(data, bytes):
            stdin.write(data)
        else:
            for chunk in data:
                stdin.write(chunk)
                stdin.flush()
    except (ValueError, OSError):
        pass  # aplay stopped early; its exit code and stderr tell why
    finally:
        try:
            stdin.close()
        except OSError:
            pass
