"""Demodulate SAME AFSK from PCM and frame its bursts.

Call this through ``alertstation.eas.decode``, which validates and converts input, groups the
bursts and reports only what two bursts read identically (47 CFR 11.33(a)(10)).
"""

import numpy as np
import numpy.typing as npt

SAME_BAUD: float  # 1562.5 / 3 = 520 5/6 bit/s
MARK_HZ: float  # 6250 / 3 = 2083 1/3 Hz, bit 1
SPACE_HZ: float  # 1562.5 Hz, bit 0
KIND_HEADER: int  # 0
KIND_EOM: int  # 1
MAX_CHARS: int  # longest header burst kept, in characters
TUNING: dict[str, float]  # loop gains and thresholds (the reference must use the same)

RawBurst = tuple[int, bytes, int, int]

class Demodulator:
    """Carry the demodulator and framer state of one stream at one sample rate.

    Raises ValueError unless 1000 <= sample_rate <= 1000000.
    """

    sample_rate: int
    window: int  # samples in one bit period, round(sample_rate / SAME_BAUD)
    samples_seen: int  # samples fed so far
    phase: float  # bit clock phase, in bits
    rate_error: float  # estimated relative bit-rate error of the sender
    def __init__(self, sample_rate: int) -> None: ...
    @property
    def earliest_pending_start(self) -> int:
        """Return a lower bound on the start sample of any burst not yet reported."""

    def feed(self, samples: npt.NDArray[np.float32]) -> list[RawBurst]:
        """Process a 1-D C-contiguous float32 chunk; return the bursts it completed.

        Each burst is ``(kind, text, start, end)``: KIND_HEADER or KIND_EOM, the raw characters
        (NUL where a character was unreadable), and absolute sample offsets of its first
        character's start and its last character's end (exclusive). An EOM's text is its four
        characters as read (at least three are ``N``). Non-finite samples count
        as 0. Chunking never changes the result. Releases the GIL.
        """

    def finish(self) -> list[RawBurst]:
        """Return the header burst still in progress at the end of the stream, if any."""

    def energies(self, samples: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Return per-sample (mark, space, power) over the last bit window, shape (3, n).

        For tests: runs only the mixer, so the instance must not be used to decode after.
        """
