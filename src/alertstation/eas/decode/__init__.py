"""Decode SAME headers and EOMs from PCM samples, audio files or a live stream.

The compiled kernel ``alertstation._native.same_decode`` demodulates and frames bursts; this
module validates and converts input, groups the (normally three) bursts of one message and
applies the validity rule of 47 CFR 11.33(a)(10): a header (or an EOM) is reported only when at
least two received bursts are identical, character for character, and the text passes
``SameHeader.parse`` (an EOM must read exactly ``NNNN``). Nothing is ever voted or repaired:
every reported text was received whole at least twice. Groups that fail the rule are handed,
with the reason, to an optional ``on_rejected`` callback as unvalidated ``Rejected`` records.
Without the compiled module it falls back to ``decode_reference`` (slow); with
``ALERTSTATION_REQUIRE_NATIVE=1`` in the environment that is an ImportError instead.
"""

from __future__ import annotations

import os
import re
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
from alertstation.same import EOM_CODE, SameHeader

__all__ = [
    "HAS_NATIVE",
    "HEADER_PATTERN",
    "AudioFileError",
    "Decoded",
    "Rejected",
    "RejectedHandler",
    "SameStreamDecoder",
    "decode_file",
    "decode_pcm",
    "read_audio",
    "tone_energies",
]

MIN_SAMPLE_RATE: Final[int] = 8000
MAX_SAMPLE_RATE: Final[int] = 96000
#: Bursts that must be identical for a header or EOM to be valid (47 CFR 11.33(a)(10)).
MIN_MATCHING_BURSTS: Final[int] = 2
#: Bursts of one message; a further burst starts a new group.
MAX_GROUP_BURSTS: Final[int] = 3
#: A burst that agrees with a group's valid text in fewer than this share of its characters
#: belongs to the next message (one sent right after), not to this one.
MIN_SAME_MESSAGE_SHARE: Final[float] = 0.5
#: Differing positions listed in a rejection reason before the rest are only counted.
MAX_LISTED_POSITIONS: Final[int] = 12
#: Silence allowed after a burst before the next one no longer belongs to the same message, on
#: top of one more burst as long as the last (so one lost burst is bridged).
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
    """One valid SAME header or EOM: received identically in ``bursts`` (2 or 3) bursts.

    ``start_sample`` is the first sample of the first character (``Z`` or ``N``) of the first
    of those bursts, ``end_sample`` one past the last sample of the last character of the last.
    """

    kind: Literal["header", "eom"]
    text: str
    start_sample: int
    end_sample: int
    bursts: int


@dataclass(frozen=True)
class Rejected:
    """Bursts heard but refused by the validity rule: unvalidated, never to be acted on.

    ``texts`` holds each burst of the group as received (``?`` where a character was
    unreadable); ``reason`` says why nothing was reported: which positions disagreed between
    bursts, or which field of a repeated header failed to parse. A burst that disagreed with a
    header that was reported from the other two is also listed, as a group of its own.

    ``refused_header`` is set when the bursts read a header exactly (two identical, shaped as a
    header) that 47 CFR 11.31 refuses, a purge of ``+0000`` or an impossible issue time, say;
    ``rule`` is then the rule it broke, as ``SameHeader.parse`` names it.
    """

    kind: Literal["header", "eom"]
    texts: tuple[str, ...]
    reason: str
    start_sample: int
    end_sample: int
    refused_header: str | None = None
    rule: str | None = None


RejectedHandler = Callable[[Rejected], None]


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


def header_problem(text: str) -> str | None:
    """Return why ``text`` is not a valid header (the failing field), or None when it is."""
    if HEADER_PATTERN.fullmatch(text) is None:
        return "not a header: expected ZCZC-ORG-EEE-PSSCCC(-PSSCCC)*+TTTT-JJJHHMM-LLLLLLLL-"
    try:
        SameHeader.parse(text)
    except ValueError as ex:
        return str(ex)
    return None


def shown(raw: bytes) -> str:
    """Return a burst's characters as text, ``?`` for each unreadable one."""
    return raw.replace(b"\0", b"?").decode("latin-1")


def differing_positions(first: bytes, second: bytes) -> list[int]:
    """Return the 1-based positions where two bursts are not identical and readable."""
    longest = max(len(first), len(second))
    return [
        i + 1
        for i in range(longest)
        if i >= len(first) or i >= len(second) or first[i] != second[i] or first[i] == 0
    ]


def _positions(positions: list[int]) -> str:
    listed = ", ".join(map(str, positions[:MAX_LISTED_POSITIONS]))
    extra = len(positions) - MAX_LISTED_POSITIONS
    return f"{listed} and {extra} more" if extra > 0 else listed


def _disagreement(raws: list[bytes]) -> str:
    """Return why no two of a group's bursts are identical and readable."""
    if len(raws) == 1:
        unreadable = [i + 1 for i, c in enumerate(raws[0]) if c == 0]
        note = f" (unreadable at positions {_positions(unreadable)})" if unreadable else ""
        return f"only one burst received{note}; 11.33(a)(10) needs two identical bursts"
    pairs = []
    for i in range(len(raws)):
        for j in range(i + 1, len(raws)):
            positions = differing_positions(raws[i], raws[j])
            pairs.append(f"bursts {i + 1} and {j + 1} differ at positions {_positions(positions)}")
    return "no two bursts identical: " + "; ".join(pairs)


def _problem(kind: str, text: str) -> str | None:
    if kind == "eom":
        return None if text == EOM_CODE else f"not an EOM: expected {EOM_CODE}, got {text!r}"
    return header_problem(text)


def matching_text(raws: list[bytes]) -> bytes | None:
    """Return the first text that two of ``raws`` read identically, with no unreadable part."""
    for raw in raws:
        if raw and 0 not in raw and raws.count(raw) >= MIN_MATCHING_BURSTS:
            return raw
    return None


def same_message(raw: bytes, text: bytes) -> bool:
    """Return True when a burst agrees with ``text`` in at least half of its characters."""
    agree = sum(1 for a, b in zip(raw, text, strict=False) if a == b)
    return agree >= MIN_SAME_MESSAGE_SHARE * len(text)


def judge(
    kind: Literal["header", "eom"], group: list[RawBurst]
) -> tuple[Decoded | None, list[Rejected]]:
    """Apply 11.33(a)(10) to one message's bursts: the valid report, if any, and the refusals.

    A text is valid when at least two bursts read it identically (no unreadable character)
    and it is a well-formed header that ``SameHeader.parse`` accepts (or exactly ``NNNN``).
    """
    raws = [burst[1] for burst in group]
    matched = matching_text(raws)
    everything = tuple(shown(raw) for raw in raws)
    if matched is None:
        reason = _disagreement(raws)
        return None, [Rejected(kind, everything, reason, group[0][2], group[-1][3])]
    text = matched.decode("latin-1")
    problem = _problem(kind, text)
    members = [burst for burst in group if burst[1] == matched]
    if problem is not None:
        reason = f"{len(members)} identical bursts, but {problem}"
        exact = kind == "header" and HEADER_PATTERN.fullmatch(text) is not None
        refusal = Rejected(
            kind,
            everything,
            reason,
            group[0][2],
            group[-1][3],
            refused_header=text if exact else None,
            rule=problem if exact else None,
        )
        return None, [refusal]
    decoded = Decoded(kind, text, members[0][2], members[-1][3], len(members))
    odd = [
        Rejected(
            kind,
            (shown(burst[1]),),
            f"burst differs from the valid {kind} at positions "
            f"{_positions(differing_positions(burst[1], matched))}",
            burst[2],
            burst[3],
        )
        for burst in group
        if burst[1] != matched
    ]
    return decoded, odd


class SameStreamDecoder:
    """Decode SAME from a stream fed in chunks of any size.

    ``feed`` returns what became certain with that chunk, ``flush`` what remains at the end of
    the stream. Everything returned over a stream equals ``decode_pcm`` of the concatenated
    chunks: offsets count from the stream's first sample. A message (the header bursts, or
    the EOM bursts) is judged once it holds three bursts of which two are identical, a burst
    of the other kind arrives, a burst unlike the two identical ones it holds arrives, or no
    further burst can still belong to it. Of three bursts with no pair, the oldest is refused
    when a fourth arrives in time. ``on_rejected``, when given, receives every group refused
    by the validity rule (see ``judge``), in the order they are judged.
    """

    def __init__(self, sample_rate: int, *, on_rejected: RejectedHandler | None = None) -> None:
        self.sample_rate = _check_rate(sample_rate)
        self._demodulator = _Demodulator(self.sample_rate)
        self._on_rejected = on_rejected
        self._group: list[RawBurst] = []
        self._kind: Literal["header", "eom"] = "header"
        self._closed = False

    @property
    def samples_seen(self) -> int:
        """Return how many samples have been fed so far."""
        return int(self._demodulator.samples_seen)

    def _deadline(self) -> int:
        """Return the last sample at which another burst of the open group may start."""
        _, _, start, end = self._group[-1]
        return end + (end - start) + round(GROUP_GAP_SECONDS * self.sample_rate)

    def _matched(self) -> bytes | None:
        return matching_text([burst[1] for burst in self._group])

    def _starts_next(self, event: RawBurst) -> bool:
        """Return True when the group already holds a valid pair that ``event`` is unlike."""
        matched = self._matched()
        return matched is not None and not same_message(event[1], matched)

    def _drop_oldest(self, event: RawBurst) -> None:
        """Refuse the oldest of three bursts without a pair: ``event`` follows too closely.

        Three bursts of which no two agree, then a fourth in time: the oldest can no longer
        pair with anything in its message, and the other two may still pair with the new one
        (a damaged or spliced burst right before the next message).
        """
        oldest = self._group.pop(0)
        if self._on_rejected is not None:
            positions = _positions(differing_positions(oldest[1], self._group[0][1]))
            reason = (
                "no later burst read it identically; it differs from the next burst at "
                f"positions {positions}"
            )
            self._on_rejected(
                Rejected(self._kind, (shown(oldest[1]),), reason, oldest[2], oldest[3])
            )

    def _close_group(self, out: list[Decoded]) -> None:
        if not self._group:
            return
        decoded, rejected = judge(self._kind, self._group)
        self._group = []
        if decoded is not None:
            out.append(decoded)
        if self._on_rejected is not None:
            for item in rejected:
                self._on_rejected(item)

    def _handle(self, events: list[RawBurst], out: list[Decoded]) -> None:
        for event in events:
            kind: Literal["header", "eom"] = "eom" if event[0] == KIND_EOM else "header"
            if self._group and (
                kind != self._kind or event[2] > self._deadline() or self._starts_next(event)
            ):
                self._close_group(out)
            if len(self._group) == MAX_GROUP_BURSTS:
                self._drop_oldest(event)
            self._kind = kind
            self._group.append(event)
            if len(self._group) == MAX_GROUP_BURSTS and self._matched() is not None:
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
        """End the stream: judge a burst cut off by the end and any message still pending."""
        if self._closed:
            return []
        self._closed = True
        out: list[Decoded] = []
        self._handle(self._demodulator.finish(), out)
        self._close_group(out)
        return out


def decode_pcm(
    samples: object, sample_rate: int, *, on_rejected: RejectedHandler | None = None
) -> list[Decoded]:
    """Decode every valid SAME header and EOM in a signal, in order of appearance.

    ``samples`` is 1-D, or 2-D (frames, channels) of which the first channel is used; integer
    samples are scaled by their full range, floats are used as they are. ``sample_rate`` must
    be an int within 8000..96000 Hz. ``on_rejected`` receives the groups refused as invalid.
    """
    decoder = SameStreamDecoder(sample_rate, on_rejected=on_rejected)
    return decoder.feed(samples) + decoder.flush()


def decode_file(
    path: str | os.PathLike[str], *, on_rejected: RejectedHandler | None = None
) -> list[Decoded]:
    """Decode every valid SAME header and EOM in an audio file (WAV directly, others via ffmpeg)."""
    samples, rate = read_audio(path)
    try:
        return decode_pcm(samples, rate, on_rejected=on_rejected)
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
