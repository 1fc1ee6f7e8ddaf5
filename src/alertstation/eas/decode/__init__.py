"""Decode SAME headers and EOMs from PCM samples, audio files or a live stream.

The compiled kernel ``alertstation._native.same_decode`` demodulates and frames bursts; this
module validates and converts input, groups the (normally three) bursts of one header, votes
them character by character and checks the result's structure
(``ZCZC-ORG-EEE-PSSCCC(-PSSCCC)*+TTTT-JJJHHMM-LLLLLLLL-``) before reporting it. Without the
compiled module it falls back to ``decode_reference`` (slow); with
``ALERTSTATION_REQUIRE_NATIVE=1`` in the environment that is an ImportError instead.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from alertstation.eas.decode.audio_io import AudioFileError, read_audio
from alertstation.eas.decode.reference import (
    KIND_EOM,
    RawBurst,
    ReferenceDemodulator,
    reference_energies,
)
from alertstation.kernel_loader import load_kernel

__all__ = [
    "HAS_NATIVE",
    "HEADER_PATTERN",
    "AudioFileError",
    "Decoded",
    "SameStreamDecoder",
    "decode_file",
    "decode_pcm",
    "read_audio",
    "tone_energies",
]

MIN_SAMPLE_RATE: Final[int] = 8000
MAX_SAMPLE_RATE: Final[int] = 96000
#: Silence allowed after a header burst before the next one no longer belongs to the same
#: message, on top of one more burst as long as the last (so one lost burst is bridged).
GROUP_GAP_SECONDS: Final[float] = 3.0
HEADER_PATTERN: Final[re.Pattern[str]] = re.compile(
    r"ZCZC-[A-Z]{3}-[A-Z]{3}-[0-9]{6}(?:-[0-9]{6}){0,30}"
    r"\+[0-9]{4}-[0-9]{7}-[A-Z0-9/ +]{1,8}-"
)

_native: ModuleType | None = load_kernel("same_decode")

HAS_NATIVE: Final[bool] = _native is not None
_Demodulator: Callable[[int], Any] = (
    _native.Demodulator if _native is not None else ReferenceDemodulator
)


@dataclass(frozen=True)
class Decoded:
    """One decoded SAME header (voted over its bursts) or one EOM burst.

    ``start_sample`` is the first sample of the first character (``Z`` or ``N``) of the first
    burst, ``end_sample`` one past the last sample of the last character of the last burst.
    ``bursts`` is how many header bursts were combined (1-3); an EOM is always 1.
    """

    kind: Literal["header", "eom"]
    text: str
    start_sample: int
    end_sample: int
    bursts: int


def _check_rate(sample_rate: object) -> int:
    """Return the sample rate, or raise ValueError unless it is an int in 8000..96000."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int | np.integer):
        raise ValueError(f"sample_rate must be an int, got {sample_rate!r}")
    rate = int(sample_rate)
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise ValueError(
            f"sample_rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {rate}"
        )
    return rate


def as_float32(samples: object) -> npt.NDArray[np.float32]:
    """Return 1-D C-contiguous float32 samples (first channel of a 2-D (frames, channels) array).

    Signed integers are scaled by their full range, unsigned ones are centred first (8-bit WAV
    style); floats are taken as they are. Anything else is a ValueError.
    """
    array = np.asarray(samples)
    if array.ndim == 2:
        if array.shape[1] < 1:
            raise ValueError("samples has no channels")
        array = array[:, 0]
    elif array.ndim != 1:
        raise ValueError(f"samples must be 1-D or 2-D (frames, channels), got {array.ndim}-D")
    kind = array.dtype.kind
    if kind == "f":
        with np.errstate(over="ignore"):
            return np.ascontiguousarray(array, dtype=np.float32)
    if kind == "i":
        # A power-of-two scale is exact in float32: one pass, no float64 temporary.
        scaled = np.ascontiguousarray(array, dtype=np.float32)
        scaled *= np.float32(2.0 ** (1 - 8 * array.dtype.itemsize))
        return scaled
    if kind == "u":
        half = float(2 ** (8 * array.dtype.itemsize - 1))
        return np.ascontiguousarray((array - half) / half, dtype=np.float32)
    raise ValueError(f"samples must be integer or floating-point, got dtype {array.dtype}")


def complete_header(raw: bytes) -> str | None:
    """Return the structurally valid header at the start of ``raw``, else None."""
    match = HEADER_PATTERN.match(raw.decode("latin-1"))
    return match.group(0) if match else None


def vote(texts: list[bytes]) -> bytes:
    """Return the character-by-character plurality of burst texts (NUL = unreadable or tied)."""
    out = bytearray()
    for position in range(max((len(t) for t in texts), default=0)):
        counts = Counter(t[position] for t in texts if position < len(t) and t[position] != 0)
        ranked = counts.most_common(2)
        if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
            out.append(0)
        else:
            out.append(ranked[0][0])
    return bytes(out)


def _report(group: list[RawBurst]) -> Decoded | None:
    """Turn one message's header bursts into a report, or None when nothing trustworthy."""
    voted = complete_header(vote([burst[1] for burst in group]))
    if voted is not None:
        return Decoded("header", voted, group[0][2], group[-1][3], len(group))
    # Voting failed (ties or damage): accept structurally valid bursts if they all read the
    # same header; bursts that disagree are reported as nothing.
    candidates = [(complete_header(burst[1]), burst[2], burst[3]) for burst in group]
    valid = [(text, start, end) for text, start, end in candidates if text is not None]
    if len({text for text, _, _ in valid}) != 1:
        return None
    return Decoded("header", valid[0][0], valid[0][1], valid[-1][2], len(valid))


class SameStreamDecoder:
    """Decode SAME from a stream fed in chunks of any size.

    ``feed`` returns what became certain with that chunk, ``flush`` what remains at the end of
    the stream. Everything returned over a stream equals ``decode_pcm`` of the concatenated
    chunks: offsets count from the stream's first sample. A header is reported once its
    message has three bursts or no further burst can still belong to it.
    """

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = _check_rate(sample_rate)
        self._demodulator = _Demodulator(self.sample_rate)
        self._group: list[RawBurst] = []
        self._closed = False

    @property
    def samples_seen(self) -> int:
        """Return how many samples have been fed so far."""
        return int(self._demodulator.samples_seen)

    def _deadline(self) -> int:
        """Return the last sample at which another burst of the open group may start."""
        _, _, start, end = self._group[-1]
        return end + (end - start) + round(GROUP_GAP_SECONDS * self.sample_rate)

    def _close_group(self, out: list[Decoded]) -> None:
        if self._group:
            report = _report(self._group)
            if report is not None:
                out.append(report)
            self._group = []

    def _handle(self, events: list[RawBurst], out: list[Decoded]) -> None:
        for event in events:
            kind, _, start, end = event
            if kind == KIND_EOM:
                self._close_group(out)
                out.append(Decoded("eom", "NNNN", start, end, 1))
                continue
            if self._group and start > self._deadline():
                self._close_group(out)
            self._group.append(event)
            if len(self._group) == 3:
                self._close_group(out)

    def feed(self, chunk: object) -> list[Decoded]:
        """Decode the next chunk of samples (any dtype ``decode_pcm`` takes)."""
        if self._closed:
            raise ValueError("this stream was flushed; start a new SameStreamDecoder")
        out: list[Decoded] = []
        self._handle(self._demodulator.feed(as_float32(chunk)), out)
        if self._group and self._deadline() < self._demodulator.earliest_pending_start:
            self._close_group(out)
        return out

    def flush(self) -> list[Decoded]:
        """End the stream: report a burst cut off by the end and any header still pending."""
        if self._closed:
            return []
        self._closed = True
        out: list[Decoded] = []
        self._handle(self._demodulator.finish(), out)
        self._close_group(out)
        return out


def decode_pcm(samples: object, sample_rate: int) -> list[Decoded]:
    """Decode every SAME header and EOM in a signal, in order of appearance.

    ``samples`` is 1-D, or 2-D (frames, channels) of which the first channel is used; integer
    samples are scaled by their full range, floats are used as they are. ``sample_rate`` must
    be an int within 8000..96000 Hz.
    """
    decoder = SameStreamDecoder(sample_rate)
    return decoder.feed(samples) + decoder.flush()


def decode_file(path: str | os.PathLike[str]) -> list[Decoded]:
    """Decode every SAME header and EOM in an audio file (WAV directly, others via ffmpeg)."""
    samples, rate = read_audio(path)
    try:
        return decode_pcm(samples, rate)
    except ValueError as ex:
        raise AudioFileError(f"{os.fspath(path)}: {ex}") from None


def tone_energies(samples: object, sample_rate: int) -> npt.NDArray[np.float64]:
    """Return per-sample (mark, space, power) over the last bit period, shape (3, n).

    Mark and space are the squared magnitudes of the correlation with each tone, power the
    sum of squares, all over the ``round(sample_rate / 520.83)`` samples ending at each one.
    """
    rate = _check_rate(sample_rate)
    pcm = as_float32(samples)
    if _native is None:
        return reference_energies(pcm, rate)
    result: npt.NDArray[np.float64] = _native.Demodulator(rate).energies(pcm)
    return result
