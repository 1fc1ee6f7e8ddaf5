"""Icecast source client: stream one message as MP3 to a mount, at real time.

Each message is its own source connection: the client logs in with HTTP ``PUT`` (Icecast 2.4
and later) and Basic auth, the mount appears, the message streams, the client disconnects and
the mount goes away. Listeners (a downstream ENDEC, a player) poll the mount URL; a station
that wants one always-on stream points a permanent mount's ``<fallback-mount>`` at this one
with ``<fallback-override>1</fallback-override>`` in the Icecast configuration.

Audio: the message's int16 PCM, with :data:`LEAD_IN_SECONDS` of silence before it and
:data:`TAIL_SECONDS` after, is encoded by ``ffmpeg`` (libmp3lame, constant bit rate, no ID3 or
Xing header; stdin and stdout pipes, no shell) and sent frame by frame, paced by each MP3
frame's duration, at most :data:`AHEAD_SECONDS` ahead of real time. With Icecast's default
burst-on-connect (64 KiB, about 8 s at 64 kbit/s) a listener that connects a few seconds after
the mount appears still receives the stream from the start of the lead-in, so it hears the
first header burst. The tail lets listeners drain before the disconnect ends their stream.

On Stop (the air control's ``cut``, checked before every frame) the message's frames stop, and
the end of message follows on the same source connection, so a listener hears the cut and then
the three ``NNNN`` bursts without reconnecting.

A live message (a national message relayed as it arrives) is fed to ffmpeg as its audio comes
and streamed as ffmpeg encodes it, the same pacing keeping the stream at real time.
"""

from __future__ import annotations

import base64
import logging
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import IO, Final

import numpy as np

from alertstation.eas.airing.outputs import AirControl, LiveMessage, Message, OutputError
from alertstation.version import __version__

log = logging.getLogger("alertstation.eas")

LEAD_IN_SECONDS: Final[float] = 2.0
TAIL_SECONDS: Final[float] = 1.5
AHEAD_SECONDS: Final[float] = 0.5
CONNECT_TIMEOUT: Final[float] = 5.0
IO_TIMEOUT: Final[float] = 15.0
CONTENT_TYPE: Final[str] = "audio/mpeg"
STREAM_NAME: Final[str] = "Alert Station EAS"
_MAX_ANSWER: Final[int] = 16384

# MPEG audio layer III tables: bit rates (kbit/s) by version, sample rates by version.
_BITRATES_V1: Final = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_BITRATES_V2: Final = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
_RATES: Final = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


class IcecastError(OutputError):
    """The Icecast server could not be reached or refused the source."""


def bitrate_for(sample_rate: int) -> int:
    """Return the MP3 bit rate (kbit/s) used for mono audio at ``sample_rate``."""
    if sample_rate >= 32000:
        return 128
    if sample_rate >= 16000:
        return 64
    return 32


@dataclass(frozen=True)
class Mp3Frame:
    """One MPEG audio frame: its bytes and how long it plays."""

    data: bytes
    seconds: float


class Mp3Framer:
    """Split an MP3 byte stream into frames (layer III), skipping anything between them."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @staticmethod
    def _frame_at(buffer: bytearray, i: int) -> tuple[int, float] | None:
        """Return (length, seconds) of a valid frame header at ``i``, else None."""
        b1, b2 = buffer[i + 1], buffer[i + 2]
        version = (b1 >> 3) & 3
        layer = (b1 >> 1) & 3
        bitrate_index = b2 >> 4
        rate_index = (b2 >> 2) & 3
        if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
            return None
        rate = _RATES[version][rate_index]
        if version == 3:
            kbps, per_frame, factor = _BITRATES_V1[bitrate_index], 1152, 144
        else:
            kbps, per_frame, factor = _BITRATES_V2[bitrate_index], 576, 72
        length = factor * kbps * 1000 // rate + ((b2 >> 1) & 1)
        return length, per_frame / rate

    def feed(self, data: bytes) -> list[Mp3Frame]:
        """Add bytes; return the complete frames now available."""
        buffer = self._buffer
        buffer.extend(data)
        frames: list[Mp3Frame] = []
        i = 0
        while len(buffer) - i >= 4:
            if buffer[i] != 0xFF or buffer[i + 1] & 0xE0 != 0xE0:
                i += 1
                continue
            found = self._frame_at(buffer, i)
            if found is None:
                i += 1
                continue
            length, seconds = found
            if len(buffer) - i < length:
                break
            frames.append(Mp3Frame(bytes(buffer[i : i + length]), seconds))
            i += length
        del buffer[:i]
        return frames


@dataclass(frozen=True)
class IcecastTarget:
    """Where and as whom to stream: server, mount and source credentials."""

    host: str
    port: int
    mount: str
    username: str
    password: str
    tls: bool = False

    @property
    def url(self) -> str:
        """Return the mount's URL (no credentials), for messages and logs."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}{self.mount}"


def _read_answer(sock: socket.socket) -> bytes:
    """Read an HTTP answer head (and whatever body arrives with it)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < _MAX_ANSWER:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _refusal(target: IcecastTarget, status: int, answer: bytes) -> IcecastError:
    body = answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""
    text = body.decode("utf-8", "replace").strip()[:200]
    where = f"Icecast at {target.url}"
    if status == 401:
        return IcecastError(
            f"{where} refused the source login (401): check the source user name "
            f"({target.username!r}) and password"
        )
    if status == 403 and "in use" in text.lower():
        return IcecastError(f"{where}: the mount {target.mount} is in use by another source (403)")
    if status == 403:
        return IcecastError(f"{where} refused the source (403): {text or 'forbidden'}")
    return IcecastError(f"{where} answered {status} to the source login: {text or 'no reason'}")


def connect_source(
    target: IcecastTarget,
    *,
    content_type: str = CONTENT_TYPE,
    stream_name: str = STREAM_NAME,
    connect_timeout: float = CONNECT_TIMEOUT,
    io_timeout: float = IO_TIMEOUT,
) -> socket.socket:
    """Log in as a source on ``target`` with HTTP PUT; return the socket to stream into."""
    host = target.host.strip("[]")
    try:
        sock = socket.create_connection((host, target.port), timeout=connect_timeout)
    except ConnectionRefusedError as ex:
        raise IcecastError(
            f"cannot connect to Icecast at {target.host}:{target.port}: connection refused "
            "(is the server running, and is the port right?)"
        ) from ex
    except TimeoutError as ex:
        raise IcecastError(
            f"cannot connect to Icecast at {target.host}:{target.port}: timed out"
        ) from ex
    except OSError as ex:
        raise IcecastError(
            f"cannot connect to Icecast at {target.host}:{target.port}: {ex}"
        ) from ex
    try:
        sock.settimeout(io_timeout)
        if target.tls:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        credentials = base64.b64encode(f"{target.username}:{target.password}".encode()).decode()
        head = (
            f"PUT {target.mount} HTTP/1.1\r\n"
            f"Host: {target.host}:{target.port}\r\n"
            f"User-Agent: AlertStation/{__version__}\r\n"
            f"Authorization: Basic {credentials}\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Ice-Name: {stream_name}\r\n"
            "Ice-Public: 0\r\n"
            "Expect: 100-continue\r\n"
            "\r\n"
        )
        sock.sendall(head.encode("latin-1"))
        answer = _read_answer(sock)
    except ssl.SSLError as ex:
        sock.close()
        raise IcecastError(f"TLS with Icecast at {target.host}:{target.port} failed: {ex}") from ex
    except TimeoutError as ex:
        sock.close()
        raise IcecastError(f"Icecast at {target.url} did not answer the source login") from ex
    except OSError as ex:
        sock.close()
        raise IcecastError(f"source login to Icecast at {target.url} failed: {ex}") from ex
    status_line = answer.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        sock.close()
        raise IcecastError(f"{target.host}:{target.port} is not an Icecast server: {status_line!r}")
    status = int(parts[1])
    if status in (100, 200):  # 100 Continue (PUT with Expect) or 200 OK: stream now
        return sock
    sock.close()
    raise _refusal(target, status, answer)


class IcecastOutput:
    """Stream each message to an Icecast mount as MP3, at real time."""

    name = "icecast"

    def __init__(
        self,
        target: IcecastTarget,
        *,
        cancel: threading.Event | None = None,
        control: AirControl | None = None,
        lead_in: float = LEAD_IN_SECONDS,
        tail: float = TAIL_SECONDS,
        ffmpeg: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.target = target
        self._control = control or AirControl(shutdown=cancel or threading.Event())
        self._cancel = self._control.shutdown
        self._lead_in = lead_in
        self._tail = tail
        self._ffmpeg = ffmpeg
        self._clock = clock

    def play(self, message: Message) -> None:
        """Encode and stream ``message``; IcecastError naming the cause when it fails."""
        ffmpeg = self._ffmpeg or shutil.which("ffmpeg")
        if ffmpeg is None:
            raise OutputError("ffmpeg is not installed; the Icecast output needs it to encode MP3")
        rate = message.sample_rate
        pad = np.zeros(int(round(self._lead_in * rate)), dtype="<i2")
        end = np.zeros(int(round(self._tail * rate)), dtype="<i2")
        control = self._control
        pcm: bytes | Iterable[bytes]
        if isinstance(message, LiveMessage):
            pcm = _live_pcm(pad, message.read(self.name, control), end, control)
        else:
            pcm = np.concatenate([pad, message.samples.astype("<i2", copy=False), end]).tobytes()
        sock = connect_source(self.target)
        try:
            seconds, cut = self._stream(sock, ffmpeg, pcm, rate, cuttable=True)
            if cut:
                control.trace(f"audio_cut:{self.name}")
                if control.eom is not None:
                    eom = control.eom
                    eom_pcm = np.concatenate([eom.samples.astype("<i2", copy=False), end]).tobytes()
                    self._stream(sock, ffmpeg, eom_pcm, eom.sample_rate, cuttable=False)
                    control.trace(f"eom_sent:{self.name}")
        finally:
            sock.close()
        log.info("EAS message streamed to %s (%.1f s)", self.target.url, seconds)

    def _stream(
        self,
        sock: socket.socket,
        ffmpeg: str,
        pcm: bytes | Iterable[bytes],
        rate: int,
        *,
        cuttable: bool,
    ) -> tuple[float, bool]:
        """Stream ``pcm`` in real time; return (seconds sent, whether Stop cut it)."""
        start = self._clock()
        sent = 0.0
        cut = self._control.cut
        try:
            with closing(_encode(ffmpeg, pcm, rate)) as frames:
                for frame in frames:
                    delay = start + sent - AHEAD_SECONDS - self._clock()
                    if delay > 0:
                        self._cancel.wait(delay)
                    if self._cancel.is_set():
                        raise OutputError(
                            f"stopped after {sent:.1f} s: the worker is shutting down"
                        )
                    if cuttable and cut.is_set():
                        return sent, True
                    sock.sendall(frame.data)
                    if not sent and cuttable:
                        self._control.trace(f"first_audio:{self.name}")
                    sent += frame.seconds
        except OSError as ex:
            raise IcecastError(
                f"Icecast at {self.target.url} dropped the source after {sent:.1f} s: {ex}"
            ) from ex
        if self._cancel.is_set():  # a live message's audio ended early for the shutdown
            raise OutputError(f"stopped after {sent:.1f} s: the worker is shutting down")
        if cuttable and cut.is_set():
            return sent, True
        remaining = start + sent - self._clock()
        if remaining > 0:  # let the last frames play out before disconnecting
            if cuttable:
                if cut.wait(remaining):
                    return sent, True
            else:
                self._cancel.wait(remaining)
        return sent, False


def _live_pcm(
    lead_in: np.ndarray, chunks: Iterable[np.ndarray], tail: np.ndarray, control: AirControl
) -> Iterator[bytes]:
    """Yield a live message's PCM bytes: the lead-in, its audio as it comes, then the tail
    (none after a Stop: the end of message follows instead)."""
    yield lead_in.tobytes()
    for chunk in chunks:
        yield chunk.astype("<i2", copy=False).tobytes()
    if not control.cut.is_set():
        yield tail.tobytes()


def _encode(ffmpeg: str, pcm: bytes | Iterable[bytes], rate: int) -> Iterator[Mp3Frame]:
    """Yield the MP3 frames ffmpeg makes of mono int16 ``pcm`` (bytes, or chunks of bytes as
    they come) at ``rate``, as they come."""
    command = [
        ffmpeg,
        "-hide_banner",
        "-loglevel",
        "error",
        "-f",
        "s16le",
        "-ar",
        str(rate),
        "-ac",
        "1",
        "-i",
        "pipe:0",
        "-c:a",
        "libmp3lame",
        "-b:a",
        f"{bitrate_for(rate)}k",
        "-write_xing",
        "0",
        "-id3v2_version",
        "0",
        "-f",
        "mp3",
        "pipe:1",
    ]
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        )
        assert process.stdin is not None and process.stdout is not None
        writer = threading.Thread(target=_feed, args=(process.stdin, pcm), daemon=True)
        writer.start()
        framer = Mp3Framer()
        try:
            while chunk := process.stdout.read1(65536):
                yield from framer.feed(chunk)
            code = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            writer.join(timeout=5)
        if code != 0:
            errors.seek(0)
            detail = errors.read().decode("utf-8", "replace").strip()[-300:]
            raise OutputError(f"ffmpeg could not encode MP3 (exit {code}): {detail}")


def _feed(stdin: IO[bytes], data: bytes | Iterable[bytes]) -> None:
    try:
        if isinstance(data, bytes):
            stdin.write(data)
        else:
            for chunk in data:
                stdin.write(chunk)
                stdin.flush()
    except (ValueError, OSError):
        pass  # ffmpeg stopped early (broken pipe); its exit code and stderr tell why
    finally:
        try:
            stdin.close()
        except OSError:
            pass
