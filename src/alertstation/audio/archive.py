"""The rolling archive: each source's decoded PCM recorded in fixed-length segments, and pruned.

:class:`ArchiveRecorder` is a listener of the audio monitor. While the audio setting
``archive_enabled`` is on, each chunk of a source's mono PCM (at the monitor's decode rate) also
goes to that source's current segment: an ffmpeg reading raw PCM on its standard input (an argv
list, no shell) and encoding it with the ``archive_profile`` stream profile into

    ``<data dir>/audio-archive/<source id>/<start>.<ext>.part``

which, once the segment is complete, is renamed ``<start>-<end>.<ext>`` (UTC,
``YYYYMMDDTHHMMSSZ``). The start comes from the station's injected clock; the end is the start
plus the audio written. A segment ends when ``archive_segment_minutes`` have passed on the
clock, when the source's session ends, or when the settings change.

The encoding runs in a thread of its own, fed through a bounded queue, so a slow or failed write
never holds up monitoring or SAME decoding. A failure (ffmpeg missing or dying, disk full, a
directory that cannot be made) is logged, counted in ``audio_sources.archive_failures`` and shown
in ``archive_error``; the rest of that segment is dropped and the next segment tries again (a
good segment clears ``archive_error``).

:func:`prune_archive` (the hourly worker job ``audio-archive-retention``) deletes segments whose
start, read from the file name, is older than ``archive_retention_days`` by the station's clock.
It only looks at files named like segments, in numbered source folders of the archive folder,
and never follows a symbolic link.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import re
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import numpy as np
from sqlalchemy import update

from alertstation.audio.profiles import EXTENSIONS, StreamProfile
from alertstation.audio.settings import AudioSettings, get_audio_settings
from alertstation.audio.tables import ERROR_WIDTH, audio_sources
from alertstation.context import Station
from alertstation.db.engine import begin_write

log = logging.getLogger("alertstation.audio.archive")

ARCHIVE_DIR: Final[str] = "audio-archive"
PRUNE_INTERVAL: Final[float] = 3600.0
#: How long the archive settings are cached between reads.
SETTINGS_SECONDS: Final[float] = 5.0
#: Chunks queued for the encoder before the rest of a segment is dropped (0.1 s chunks: 60 s).
QUEUE_CHUNKS: Final[int] = 600
STAMP: Final[str] = "%Y%m%dT%H%M%SZ"
_STAMP = r"\d{8}T\d{6}Z"
_EXT = "|".join(re.escape(ext) for ext in sorted(EXTENSIONS))
SEGMENT_NAME: Final[re.Pattern[str]] = re.compile(rf"^({_STAMP})-({_STAMP})\.({_EXT})$")
PARTIAL_NAME: Final[re.Pattern[str]] = re.compile(rf"^({_STAMP})\.({_EXT})\.part$")


def archive_root(data_dir: Path) -> Path:
    """Return the archive folder of a station."""
    return Path(data_dir) / ARCHIVE_DIR


def source_folder(data_dir: Path, source_id: int) -> Path:
    """Return the archive folder of one source."""
    return archive_root(data_dir) / str(int(source_id))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(STAMP)


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, STAMP).replace(tzinfo=UTC)


@dataclass(frozen=True)
class Segment:
    """A finished archive segment on disk."""

    source_id: int
    name: str
    start: datetime
    end: datetime
    size: int

    @property
    def extension(self) -> str:
        """Return the file extension (which says the codec)."""
        return self.name.rsplit(".", 1)[1]

    @property
    def content_type(self) -> str:
        """Return the MIME type of the file."""
        return EXTENSIONS[self.extension]

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "name": self.name,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "duration_seconds": int((self.end - self.start).total_seconds()),
            "bytes": self.size,
            "content_type": self.content_type,
            "url": f"/api/audio/sources/{self.source_id}/archive/{self.name}",
        }


def list_segments(data_dir: Path, source_id: int) -> list[Segment]:
    """Return a source's finished segments, newest first (none when it has no folder)."""
    folder = source_folder(data_dir, source_id)
    found: list[Segment] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        match = SEGMENT_NAME.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        try:
            size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        found.append(Segment(source_id, entry.name, _parse(match[1]), _parse(match[2]), int(size)))
    found.sort(key=lambda segment: (segment.start, segment.name), reverse=True)
    return found


def find_segment(data_dir: Path, source_id: int, name: str) -> tuple[Segment, Path] | None:
    """Return a listed segment and its path; the name is matched, never joined as given."""
    if not SEGMENT_NAME.match(name):
        return None
    for segment in list_segments(data_dir, source_id):
        if segment.name == name:
            return segment, source_folder(data_dir, source_id) / segment.name
    return None


def prune_archive(data_dir: Path, now: datetime, retention_days: int) -> int:
    """Delete segments (and leftover partial ones) that started before the retention window."""
    cutoff = now - timedelta(days=retention_days)
    root = archive_root(data_dir)
    removed = 0
    try:
        folders = [e for e in os.scandir(root) if e.name.isdigit()]
    except OSError:
        return 0
    for folder in folders:
        if not folder.is_dir(follow_symlinks=False):
            continue
        try:
            entries = list(os.scandir(folder.path))
        except OSError:
            continue
        for entry in entries:
            match = SEGMENT_NAME.match(entry.name) or PARTIAL_NAME.match(entry.name)
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            if _parse(match[1]) >= cutoff:
                continue
            try:
                os.unlink(entry.path)
                removed += 1
            except FileNotFoundError:
                continue
            except OSError as ex:
                log.warning("cannot delete archive segment %s: %s", entry.path, ex.strerror)
    return removed


def prune_job(station: Station) -> None:
    """The worker job: delete archive segments older than ``archive_retention_days``."""
    with station.engine.connect() as conn:
        days = get_audio_settings(conn).archive_retention_days
    removed = prune_archive(station.settings.data_dir, station.clock(), days)
    if removed:
        log.info("pruned %d audio archive segments older than %d days", removed, days)


class SegmentWriter:
    """One segment being encoded: a queue of PCM chunks and the thread that feeds ffmpeg."""

    def __init__(
        self,
        folder: Path,
        source_id: int,
        start: datetime,
        ends: datetime,
        sample_rate: int,
        profile: StreamProfile,
        ffmpeg: str,
        report: Any,
    ) -> None:
        self.folder = folder
        self.source_id = source_id
        self.start = start
        self.ends = ends
        self.sample_rate = sample_rate
        self.profile = profile
        self.ffmpeg = ffmpeg
        self._report = report
        self._queue: queue.Queue[bytes] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self._closing = threading.Event()
        self.failed: str | None = None
        self.samples = 0
        self.thread = threading.Thread(
            target=self._run, name=f"audio-archive-{source_id}", daemon=True
        )
        self.thread.start()

    @property
    def partial(self) -> Path:
        """Return the file the segment is written to until it is complete."""
        return self.folder / f"{_stamp(self.start)}.{self.profile.spec.extension}.part"

    def feed(self, samples: np.ndarray) -> None:
        """Queue a chunk (never blocks; a full queue fails the rest of the segment)."""
        if self.failed is not None or self._closing.is_set():
            return
        try:
            self._queue.put_nowait(samples.astype("<i2", copy=False).tobytes())
        except queue.Full:
            self.failed = "the archive encoder fell behind"

    def finish(self) -> None:
        """End the segment: the thread writes what is queued, then completes the file."""
        self._closing.set()

    def _run(self) -> None:
        process: subprocess.Popen[bytes] | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            argv = [
                self.ffmpeg,
                "-hide_banner",
                "-nostats",
                "-loglevel",
                "error",
                "-y",
                "-f",
                "s16le",
                "-ar",
                str(self.sample_rate),
                "-ac",
                "1",
                "-i",
                "pipe:0",
                *self.profile.encoder_args(),
                str(self.partial),
            ]
            process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            assert process.stdin is not None
            while True:
                try:
                    data = self._queue.get(timeout=0.2)
                except queue.Empty:
                    if self._closing.is_set():
                        break
                    continue
                if self.failed is None:
                    process.stdin.write(data)
                    self.samples += len(data) // 2
            process.stdin.close()
            code = process.wait(timeout=60)
            if code != 0 and self.failed is None:
                self.failed = f"ffmpeg exited with status {code}{_reason(process)}"
        except (BrokenPipeError, ValueError):
            self.failed = self.failed or f"ffmpeg stopped{_reason(process)}"
        except subprocess.TimeoutExpired:
            self.failed = self.failed or "ffmpeg did not finish the segment"
        except OSError as ex:
            self.failed = self.failed or f"cannot write the archive: {ex.strerror or ex}"
        except Exception as ex:  # noqa: BLE001 - a recorder failure must never spread
            log.exception("audio source %s: archive segment failed", self.source_id)
            self.failed = self.failed or f"internal error: {type(ex).__name__}"
        finally:
            if process is not None:
                _end(process)
        self._complete()

    def _complete(self) -> None:
        if self.failed is None and self.samples == 0:
            with contextlib.suppress(OSError):
                self.partial.unlink()
            return
        if self.failed is None:
            seconds = max(1, math.ceil(self.samples / self.sample_rate))
            end = self.start + timedelta(seconds=seconds)
            name = f"{_stamp(self.start)}-{_stamp(end)}.{self.profile.spec.extension}"
            try:
                os.replace(self.partial, self.folder / name)
            except OSError as ex:
                self.failed = f"cannot complete the segment: {ex.strerror or ex}"
        if self.failed is not None:
            with contextlib.suppress(OSError):
                self.partial.unlink()
            log.warning("audio source %s: archive segment failed: %s", self.source_id, self.failed)
        self._report(self.source_id, self.failed)


def _reason(process: subprocess.Popen[bytes] | None) -> str:
    """Return ``: <ffmpeg's first error line>`` once it has exited, or nothing."""
    if process is None or process.stderr is None or process.poll() is None:
        return ""
    with contextlib.suppress(OSError, ValueError):
        line = process.stderr.read(2000).decode("utf-8", "replace").strip().splitlines()
        if line:
            return f": {line[-1][:200]}"
    return ""


def _end(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.close()
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)


class ArchiveRecorder:
    """A listener of the audio monitor that records each source into rolling segments.

    Called from each source's runner thread with ``(source id, int16 chunk, first sample)``;
    ``end_session`` is called when a source's session ends.
    """

    def __init__(
        self,
        station: Station,
        sample_rate: int,
        *,
        ffmpeg: str = "ffmpeg",
        settings_seconds: float = SETTINGS_SECONDS,
    ) -> None:
        self.station = station
        self.sample_rate = sample_rate
        self.ffmpeg = ffmpeg
        self.settings_seconds = settings_seconds
        self._lock = threading.Lock()
        self._settings: AudioSettings | None = None
        self._read_at = -math.inf
        self._writers: dict[int, SegmentWriter] = {}
        self._last_start: dict[int, datetime] = {}
        #: The latest segments ended, in order (the monitor waits for them when it stops).
        self.finished: deque[SegmentWriter] = deque(maxlen=100)

    def settings(self) -> AudioSettings:
        """Return the audio settings, read at most every ``settings_seconds``."""
        with self._lock:
            if self._settings is None or time.monotonic() - self._read_at >= self.settings_seconds:
                with self.station.engine.connect() as conn:
                    self._settings = get_audio_settings(conn)
                self._read_at = time.monotonic()
            return self._settings

    def __call__(self, source_id: int, samples: np.ndarray, first: int) -> None:
        writer = self._writers.get(source_id)
        try:
            settings = self.settings()
        except Exception:  # noqa: BLE001 - a database hiccup: keep the current segment going
            log.exception("audio archive: cannot read the settings")
            if writer is not None:
                writer.feed(samples)
            return
        if not settings.archive_enabled:
            self.end_session(source_id)
            return
        now = self.station.clock()
        profile = settings.archive_stream_profile
        if writer is not None and (now >= writer.ends or writer.profile != profile):
            self.end_session(source_id)
            writer = None
        if writer is None:
            writer = self._start(source_id, now, settings, profile)
        writer.feed(samples)

    def _start(
        self, source_id: int, now: datetime, settings: AudioSettings, profile: StreamProfile
    ) -> SegmentWriter:
        start = now.astimezone(UTC).replace(microsecond=0)
        last = self._last_start.get(source_id)
        if last is not None and start <= last:
            start = last + timedelta(seconds=1)  # two segments never share a name
        self._last_start[source_id] = start
        writer = SegmentWriter(
            source_folder(self.station.settings.data_dir, source_id),
            source_id,
            start,
            now + timedelta(minutes=settings.archive_segment_minutes),
            self.sample_rate,
            profile,
            self.ffmpeg,
            self._report,
        )
        self._writers[source_id] = writer
        return writer

    def end_session(self, source_id: int) -> None:
        """Complete the source's current segment, if any (its session ended)."""
        writer = self._writers.pop(source_id, None)
        if writer is not None:
            writer.finish()
            self.finished.append(writer)

    def close(self) -> None:
        """Complete every current segment and wait for them (the monitor is stopping)."""
        for source_id in list(self._writers):
            self.end_session(source_id)
        for writer in list(self.finished):
            writer.thread.join(timeout=60)

    def _report(self, source_id: int, error: str | None) -> None:
        """Write a segment's outcome on its source: clear the error, or count a failure."""
        c = audio_sources.c
        values: dict[str, Any] = {"archive_error": error[:ERROR_WIDTH] if error else None}
        if error:
            values["archive_failures"] = c.archive_failures + 1
        try:
            with begin_write(self.station.engine) as conn:
                conn.execute(update(audio_sources).where(c.id == source_id).values(**values))
        except Exception:  # noqa: BLE001 - the next segment reports again
            log.exception("audio source %s: cannot record the archive status", source_id)
