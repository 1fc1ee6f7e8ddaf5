"""Audio levels and silence: per-block RMS and peak in dBFS, clipping counts, silence events.

:class:`LevelMeter` is fed int16 or float32 samples in chunks of any length and carries its
state across chunks. Each finished block (``block_seconds`` of audio) yields its RMS and peak in
dBFS (full scale 1.0, or 32768 for int16; silence floors at -120) and how many samples reached
``clip_level`` of full scale (for int16, from ``ceil(clip_level * 32768)``: int16 blocks are
summed in exact integers). One meter takes one sample type.

Silence starts when blocks stay below ``threshold_dbfs`` for at least ``min_silence_seconds``
(the event names the first quiet sample) and ends at the first block at or above
``threshold_dbfs + hysteresis_db``, so a level hovering at the threshold does not flap.

The work is done by the compiled kernel ``alertstation._native.levels`` when it is built, else by
:class:`PyLevelMeter`, its pure-Python twin (same arithmetic in the same order, the same results
to the bit; the tests hold them to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from alertstation.kernel_loader import load_kernel

FLOOR_DBFS: Final[float] = -120.0
INT16_SCALE: Final[float] = 1.0 / 32768.0
INT16_SCALE_SQ: Final[float] = 1.0 / 1073741824.0  # 1 / 32768 ** 2
DEFAULT_CLIP_LEVEL: Final[float] = 32767.0 / 32768.0


@dataclass(frozen=True)
class Levels:
    """What one chunk finished: per-block levels and the silence events, in order."""

    rms_dbfs: npt.NDArray[np.float64]
    peak_dbfs: npt.NDArray[np.float64]
    clipped: npt.NDArray[np.int64]
    events: list[tuple[str, int]]  # ("start" | "end", sample index since the first chunk)

    def __len__(self) -> int:
        return int(self.rms_dbfs.shape[0])


class PyLevelMeter:
    """The pure-Python reference twin of the compiled ``LevelMeter`` (same arguments)."""

    def __init__(
        self,
        block_size: int,
        threshold_dbfs: float,
        min_silence_samples: int,
        hysteresis_db: float,
        clip_level: float,
    ) -> None:
        if block_size < 1 or min_silence_samples < 0 or not hysteresis_db >= 0:
            raise ValueError("block_size >= 1, min_silence_samples >= 0, hysteresis_db >= 0")
        self.block_size = block_size
        self.threshold_dbfs = threshold_dbfs
        self.min_silence_samples = min_silence_samples
        self.hysteresis_db = hysteresis_db
        self.clip_level = clip_level
        self.position = 0
        self.silent = False
        self._sum_sq = 0.0  # float32 input: sum of squares and peak of the open block
        self._peak = 0.0
        self._isum = 0  # int16 input: the same, in exact integers
        self._itop = 0
        self._iclip = math.ceil(clip_level * 32768.0)
        self._type = 0
        self._clipped = 0
        self._filled = 0
        self._quiet_start = 0
        self._quiet_len = 0

    def _check_type(self, kind: int) -> None:
        if self._type and self._type != kind:
            raise ValueError("a meter takes one sample type: int16 or float32, not both")
        self._type = kind

    def feed_int16(self, samples: npt.NDArray[np.int16]) -> tuple[Any, Any, Any, list]:
        """Feed int16 samples; return (rms, peak, clipped, events) of finished blocks."""
        self._check_type(1)
        return self._feed(samples.tolist(), self._add_int16)

    def feed_float32(self, samples: npt.NDArray[np.float32]) -> tuple[Any, Any, Any, list]:
        """Feed float32 samples; return (rms, peak, clipped, events) of finished blocks."""
        self._check_type(2)
        return self._feed(samples.tolist(), self._add_float32)

    def _add_int16(self, s: int) -> None:
        a = abs(s)
        self._isum += s * s
        self._itop = max(self._itop, a)
        self._clipped += a >= self._iclip

    def _add_float32(self, raw: float) -> None:
        v = 0.0 if raw != raw else raw
        self._sum_sq += v * v
        a = abs(v)
        if a > self._peak:
            self._peak = a
        if a >= self.clip_level:
            self._clipped += 1

    def _feed(self, values: list[Any], add: Any) -> tuple[Any, Any, Any, list]:
        rms: list[float] = []
        peaks: list[float] = []
        clips: list[int] = []
        events: list[tuple[str, int]] = []
        start = self.position
        for i, value in enumerate(values):
            add(value)
            self._filled += 1
            if self._filled == self.block_size:
                rms_db, peak_db = self._block_levels()
                rms.append(rms_db)
                peaks.append(peak_db)
                clips.append(self._clipped)
                event = self._silence(rms_db, start + i + 1 - self.block_size)
                if event is not None:
                    events.append(event)
                self._sum_sq = 0.0
                self._peak = 0.0
                self._isum = 0
                self._itop = 0
                self._clipped = 0
                self._filled = 0
        self.position = start + len(values)
        return (
            np.array(rms, dtype=np.float64),
            np.array(peaks, dtype=np.float64),
            np.array(clips, dtype=np.int64),
            events,
        )

    def _block_levels(self) -> tuple[float, float]:
        if self._isum or self._itop:
            mean = float(self._isum) * INT16_SCALE_SQ / self.block_size
            top = self._itop * INT16_SCALE
        else:
            mean = self._sum_sq / self.block_size
            top = self._peak
        rms_db = max(10.0 * math.log10(mean) if mean > 0.0 else FLOOR_DBFS, FLOOR_DBFS)
        peak_db = max(20.0 * math.log10(top) if top > 0.0 else FLOOR_DBFS, FLOOR_DBFS)
        return rms_db, peak_db

    def _silence(self, rms_db: float, block_start: int) -> tuple[str, int] | None:
        if not self.silent:
            if rms_db < self.threshold_dbfs:
                if self._quiet_len == 0:
                    self._quiet_start = block_start
                self._quiet_len += self.block_size
                if self._quiet_len >= self.min_silence_samples:
                    self.silent = True
                    return ("start", self._quiet_start)
            else:
                self._quiet_len = 0
        elif rms_db >= self.threshold_dbfs + self.hysteresis_db:
            self.silent = False
            self._quiet_len = 0
            return ("end", block_start)
        return None


_native: ModuleType | None = load_kernel("levels")
HAS_NATIVE: Final[bool] = _native is not None
_Impl: Any = _native.LevelMeter if _native is not None else PyLevelMeter


class LevelMeter:
    """Measure a stream of samples block by block; see the module docstring for the rules."""

    def __init__(
        self,
        sample_rate: int,
        *,
        block_seconds: float = 0.1,
        threshold_dbfs: float = -50.0,
        min_silence_seconds: float = 10.0,
        hysteresis_db: float = 3.0,
        clip_level: float = DEFAULT_CLIP_LEVEL,
        reference: bool = False,
    ) -> None:
        _check(isinstance(sample_rate, int) and 1000 <= sample_rate <= 384_000, "sample_rate")
        _check(_finite(block_seconds) and block_seconds > 0, "block_seconds")
        _check(_finite(threshold_dbfs) and -120 <= threshold_dbfs <= 0, "threshold_dbfs")
        _check(_finite(min_silence_seconds) and min_silence_seconds >= 0, "min_silence_seconds")
        _check(_finite(hysteresis_db) and 0 <= hysteresis_db <= 60, "hysteresis_db")
        _check(_finite(clip_level) and 0 < clip_level <= 1, "clip_level")
        block_size = max(1, round(sample_rate * block_seconds))
        self.sample_rate = sample_rate
        self.block_size = block_size
        impl = PyLevelMeter if reference else _Impl
        self._impl = impl(
            block_size,
            float(threshold_dbfs),
            round(sample_rate * min_silence_seconds),
            float(hysteresis_db),
            float(clip_level),
        )

    @property
    def silent(self) -> bool:
        """Tell whether the stream is in silence now."""
        return bool(self._impl.silent)

    @property
    def position(self) -> int:
        """Return the samples fed so far."""
        return int(self._impl.position)

    def feed(self, samples: npt.NDArray[Any]) -> Levels:
        """Feed a one-dimensional int16 or float32 chunk; return what it finished."""
        if not isinstance(samples, np.ndarray) or samples.ndim != 1:
            raise ValueError("samples must be a one-dimensional numpy array")
        if samples.dtype == np.int16:
            rms, peak, clipped, events = self._impl.feed_int16(np.ascontiguousarray(samples))
        elif samples.dtype == np.float32:
            rms, peak, clipped, events = self._impl.feed_float32(np.ascontiguousarray(samples))
        else:
            raise ValueError(f"samples must be int16 or float32, not {samples.dtype}")
        return Levels(rms, peak, clipped, events)

    def feed_bytes(self, data: bytes) -> Levels:
        """Feed signed 16-bit little-endian PCM bytes (an even number of them)."""
        if len(data) % 2:
            raise ValueError("PCM s16le data must have an even number of bytes")
        return self.feed(np.frombuffer(data, dtype="<i2").astype(np.int16, copy=False))


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check(ok: bool, name: str) -> None:
    if not ok:
        raise ValueError(f"{name} is out of range")
