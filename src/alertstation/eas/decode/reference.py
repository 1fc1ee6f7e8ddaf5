"""Mirror the SAME demodulator kernel in plain Python: the oracle the tests compare against.

``ReferenceDemodulator`` repeats ``alertstation._native.same_decode.Demodulator`` step for
step, with every floating-point operation in the same order, so on the same samples both make
the same decisions and report the same bursts. It is slow (a Python loop per sample) and is
also the fallback when the compiled module is missing. ``reference_energies`` computes the
front end's windowed tone energies a different way (numpy, exact phases, convolution) as an
independent check of the running sums.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

KIND_HEADER = 0
KIND_EOM = 1
MAX_CHARS = 268

RESEED = 256
GAIN_PHASE = 0.25
GAIN_RATE = 0.01
MAX_RATE_ERROR = 0.06
RATE_LEAK = 0.98
MIN_QUALITY = 0.3
MIN_POWER = 1e-18
HIGHPASS_HZ = 600.0
TINY = 1e-30
TUNING = {
    "RESEED": RESEED,
    "GAIN_PHASE": GAIN_PHASE,
    "GAIN_RATE": GAIN_RATE,
    "MAX_RATE_ERROR": MAX_RATE_ERROR,
    "RATE_LEAK": RATE_LEAK,
    "MIN_QUALITY": MIN_QUALITY,
    "MIN_POWER": MIN_POWER,
    "HIGHPASS_HZ": HIGHPASS_HZ,
    "TINY": TINY,
    "MAX_CHARS": MAX_CHARS,
}

HUNT, SYNC, START, HEADER = range(4)
ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+/ ")

RawBurst = tuple[int, bytes, int, int]


class Highpass:
    """Filter one sample at a time: 2nd-order Butterworth high-pass at HIGHPASS_HZ."""

    def __init__(self, sample_rate: int) -> None:
        w0 = 2.0 * math.pi * HIGHPASS_HZ / sample_rate
        alpha = math.sin(w0) / (2.0 * math.sqrt(0.5))
        a0 = 1.0 + alpha
        self.b0 = ((1.0 + math.cos(w0)) / 2.0) / a0
        self.b1 = -(1.0 + math.cos(w0)) / a0
        self.b2 = self.b0
        self.a1 = (-2.0 * math.cos(w0)) / a0
        self.a2 = (1.0 - alpha) / a0
        self.z1 = self.z2 = 0.0

    def step(self, x: float) -> float:
        """Return the next output sample (transposed direct form II)."""
        y = self.b0 * x + self.z1
        self.z1 = self.b1 * x - self.a1 * y + self.z2
        self.z2 = self.b2 * x - self.a2 * y
        if -TINY < self.z1 < TINY:
            self.z1 = 0.0
        if -TINY < self.z2 < TINY:
            self.z2 = 0.0
        return y


class ReferenceDemodulator:
    """Demodulate and frame SAME bursts one sample at a time, exactly as the kernel does."""

    def __init__(self, sample_rate: int) -> None:
        if not 1000 <= sample_rate <= 1_000_000:
            raise ValueError(f"sample_rate must be within 1000..1000000 Hz, got {sample_rate}")
        self.sample_rate = sample_rate
        self.window = math.floor(sample_rate * 3.0 / 1562.5 + 0.5)
        self.ring = [[0.0] * 5 for _ in range(self.window)]
        self.acc = [0.0] * 5
        self.mc = self.ms = self.sc = self.ss = 0.0
        self.mrc = math.cos(2.0 * math.pi * (6250.0 / 3.0) / sample_rate)
        self.mrs = math.sin(2.0 * math.pi * (6250.0 / 3.0) / sample_rate)
        self.src = math.cos(2.0 * math.pi * 1562.5 / sample_rate)
        self.srs = math.sin(2.0 * math.pi * 1562.5 / sample_rate)
        self.highpass = Highpass(sample_rate)
        self.step0 = 1562.5 / (3.0 * sample_rate)
        self.samples_seen = 0
        self.phase = self.rate_error = self.d_prev = 0.0
        self.carrier = False
        self.state = HUNT
        self.shift, self.erase = 0, 0xFFFF
        self.bit_index, self.bitcount = 0, 0
        self.bit_at = [0] * 8
        self.chars: list[int] = []
        self.plus_at = -1
        self.bad_run = 0
        self.burst_start = self.burst_end = 0

    @property
    def earliest_pending_start(self) -> int:
        """Return a lower bound on the start sample of any burst not yet reported."""
        if self.state in (START, HEADER):
            return self.burst_start
        return self.samples_seen - self.window

    def _mix(self, x: float) -> None:
        n, fs = self.samples_seen, self.sample_rate
        slot = n % self.window
        row = self.ring[slot]
        if n % RESEED == 0:
            angle = 2.0 * math.pi * float((6250 * n) % (3 * fs)) / float(3 * fs)
            self.mc, self.ms = math.cos(angle), math.sin(angle)
            angle = 2.0 * math.pi * float((3125 * n) % (2 * fs)) / float(2 * fs)
            self.sc, self.ss = math.cos(angle), math.sin(angle)
        y = self.highpass.step(x)
        values = (x * self.mc, x * self.ms, x * self.sc, x * self.ss, y * y)
        for j, value in enumerate(values):
            self.acc[j] += value - row[j]
            row[j] = value
        if slot == self.window - 1:
            self.acc = [0.0] * 5
            for stored in self.ring:
                for j in range(5):
                    self.acc[j] += stored[j]
        mc = self.mc * self.mrc - self.ms * self.mrs
        self.ms = self.ms * self.mrc + self.mc * self.mrs
        self.mc = mc
        sc = self.sc * self.src - self.ss * self.srs
        self.ss = self.ss * self.src + self.sc * self.srs
        self.sc = sc

    def _step(self, x: float) -> RawBurst | None:
        if not math.isfinite(x):
            x = 0.0
        self._mix(x)
        acc = self.acc
        em = acc[0] * acc[0] + acc[1] * acc[1]
        es = acc[2] * acc[2] + acc[3] * acc[3]
        d = em - es
        step = self.step0 * (1.0 + self.rate_error)
        self.phase += step
        if self.carrier and ((self.d_prev < 0.0 <= d) or (self.d_prev >= 0.0 > d)):
            frac = self.d_prev / (self.d_prev - d)
            err = self.phase - (1.0 - frac) * step - 0.5
            err = err - math.floor(err + 0.5)
            self.phase -= GAIN_PHASE * err
            self.rate_error -= GAIN_RATE * err
            self.rate_error = min(MAX_RATE_ERROR, max(-MAX_RATE_ERROR, self.rate_error))
        self.d_prev = d
        event = None
        if self.phase >= 1.0:
            self.phase -= 1.0
            power = acc[4]
            quality = 0.0 if power < MIN_POWER else (2.0 * (em + es)) / (self.window * power)
            self.carrier = quality >= MIN_QUALITY
            if not self.carrier:
                self.rate_error *= RATE_LEAK
            event = self._on_bit(em > es, not self.carrier, self.samples_seen)
        self.samples_seen += 1
        return event

    def _on_bit(self, bit: bool, erased: bool, at: int) -> RawBurst | None:
        self.shift = (self.shift >> 1) | (int(bit) << 15)
        self.erase = (self.erase >> 1) | (int(erased) << 15)
        self.bit_at[self.bit_index & 7] = at
        self.bit_index += 1
        if self.shift == 0xABAB and self.erase == 0 and self.state != HEADER:
            self.state, self.bitcount = SYNC, 0
            return None
        if self.state == HUNT:
            return None
        self.bitcount += 1
        if self.bitcount < 8:
            return None
        self.bitcount = 0
        byte = self.shift >> 8
        if self.state == SYNC:
            if byte == 0xAB:
                return None
            self.state = START
            self.chars = []
            self.bad_run = 0
            self.burst_start = self.bit_at[(self.bit_index - 8) & 7] - self.window + 1
        return self._on_char(byte, at)

    def _on_char(self, byte: int, at: int) -> RawBurst | None:
        valid = byte in ALPHABET
        self.chars.append(byte if valid else 0)
        if valid:
            self.bad_run = 0
            self.burst_end = at + 1
        else:
            self.bad_run += 1
        if self.state == START:
            if len(self.chars) < 4:
                return None
            zczc = sum(c == z for c, z in zip(self.chars, b"ZCZC", strict=True))
            nnnn = self.chars.count(ord("N"))
            if nnnn >= 3:
                self.state = HUNT
                return (KIND_EOM, bytes(self.chars), self.burst_start, at + 1)
            if zczc >= 3:
                self.state, self.plus_at = HEADER, -1
                return None
            self.state = HUNT
            return None
        if valid and byte == ord("+") and self.plus_at < 0:
            self.plus_at = len(self.chars) - 1
        if self.plus_at >= 0:
            after = len(self.chars) - self.plus_at - 1
            if after == 22 or (after >= 15 and valid and byte == ord("-")):
                return self._end_header()
        if self.bad_run >= 2 or len(self.chars) >= MAX_CHARS:
            return self._end_header()
        return None

    def _end_header(self) -> RawBurst:
        self.state = HUNT
        text = bytes(self.chars[: len(self.chars) - self.bad_run])
        return (KIND_HEADER, text, self.burst_start, self.burst_end)

    def feed(self, samples: npt.NDArray[np.float32]) -> list[RawBurst]:
        """Process a chunk of float32 samples; return the bursts it completed."""
        events = []
        for x in np.asarray(samples, dtype=np.float32).tolist():
            event = self._step(x)
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> list[RawBurst]:
        """Return the header burst still in progress at the end of the stream, if any."""
        if self.state == HEADER and len(self.chars) - self.bad_run > 0:
            return [self._end_header()]
        self.state = HUNT
        return []


def reference_energies(
    samples: npt.NDArray[np.float32], sample_rate: int
) -> npt.NDArray[np.float64]:
    """Return per-sample (mark, space, high-passed power) over the last bit window, via numpy."""
    x = np.asarray(samples, dtype=np.float64)
    x = np.where(np.isfinite(x), x, 0.0)
    window = math.floor(sample_rate * 3.0 / 1562.5 + 0.5)
    index = np.arange(x.size, dtype=np.int64)
    kernel = np.ones(window)
    out = np.empty((3, x.size), dtype=np.float64)
    if x.size == 0:
        return out
    for row, (num, den) in enumerate(((6250, 3 * sample_rate), (3125, 2 * sample_rate))):
        angle = 2.0 * np.pi * ((num * index) % den) / den
        mixed = x * np.exp(1j * angle)
        summed = np.convolve(mixed, kernel)[: x.size]
        out[row] = np.abs(summed) ** 2
    highpass = Highpass(sample_rate)
    filtered = np.array([highpass.step(value) for value in x.tolist()])
    out[2] = np.convolve(filtered * filtered, kernel)[: x.size]
    return out
