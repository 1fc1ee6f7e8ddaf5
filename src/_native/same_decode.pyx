# cython: language_level=3
# distutils: extra_compile_args = -ffp-contract=off
# (No fused multiply-add: every floating-point step must round exactly as the pure-Python
# reference in alertstation.eas.decode.reference does, so the two agree decision for decision.)
"""Demodulate SAME (47 CFR 11.31) AFSK from PCM and frame its bursts.

Per sample: mix with the mark (2083 1/3 Hz) and space (1562.5 Hz) tones and keep running sums
over one bit period: I/Q of both tones, and the power of the signal after a 600 Hz high-pass
(so a DC offset or mains hum does not count as noise). The discriminator is ``mark energy -
space energy``; its zero crossings fall half a bit after each bit edge, and a second-order loop
(phase and rate) places each decision one bit after the edge, where the window holds exactly
one bit. A decision whose window holds little tone energy compared with its power is an
erasure (no carrier).

Framing: two consecutive preamble bytes 0xAB (LSB first) give byte alignment; after the
preamble the first four characters must look like ``ZCZC`` or ``NNNN`` (3 of 4 suffice; an
EOM burst is returned with its four characters as read, so a damaged one can be refused). A
header burst then runs until the '-' closing the station id after its first '+'
(``+TTTT-JJJHHMM-LLLLLLLL-``; ids shorter than 8 characters occur), two bad characters in a
row, or 268 characters. Characters outside the SAME alphabet or with the eighth bit set are
stored as NUL. Erasures only gate the preamble: a character decided while the carrier quality
was low is kept as decided, since nothing is reported unless two bursts read the same text
character for character (a low-quality decision is still right far more often than not, and
dropping it lost most messages below 3 dB SNR). The validity rule (two identical bursts, 47 CFR
11.33(a)(10)) and the structural check live in ``alertstation.eas.decode``.

Every step depends only on the absolute sample index and the state carried between calls, so
feeding a signal in any chunking gives the same events.
"""

cimport cython
from libc.math cimport M_PI, cos, floor, isfinite, sin, sqrt
from libc.stdint cimport int64_t, uint32_t
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdlib cimport free, malloc

import numpy as np

SAME_BAUD = 1562.5 / 3.0
MARK_HZ = 6250.0 / 3.0
SPACE_HZ = 1562.5
KIND_HEADER = 0
KIND_EOM = 1
MAX_CHARS = 268

cdef int C_MAX_CHARS = 268
cdef int RESEED = 256  # oscillators re-seeded from the exact phase every RESEED samples
cdef double GAIN_PHASE = 0.25  # share of a crossing's timing error removed from the phase
cdef double GAIN_RATE = 0.01  # share of it added to the bit-rate estimate
cdef double MAX_RATE_ERROR = 0.06  # the rate estimate stays within +-6 %
cdef double RATE_LEAK = 0.98  # the estimate decays toward nominal at every erased decision
cdef double MIN_QUALITY = 0.3  # below this, a decision is an erasure (no carrier)
cdef double MIN_POWER = 1e-18  # a window with less power is silence
cdef double HIGHPASS_HZ = 600.0  # the power measure ignores DC and mains hum below this
cdef double TINY = 1e-30  # filter state below this is flushed to zero (no subnormals)

# The tuning above, readable from Python (the reference implementation must match it).
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
    "MAX_CHARS": C_MAX_CHARS,
}

cdef enum:
    EVENT_HEADER = 0
    EVENT_EOM = 1

cdef enum:
    HUNT = 0
    SYNC = 1
    START = 2
    HEADER = 3

cdef unsigned char ALPHABET[128]
cdef int _c
for _c in range(128):
    ALPHABET[_c] = 0
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+/ ":
    ALPHABET[_c] = 1


@cython.final
cdef class Demodulator:
    """Carry the whole demodulator and framer state for one stream at one sample rate."""

    cdef readonly int sample_rate
    cdef readonly int window
    cdef readonly int64_t samples_seen
    cdef int slot, until_reseed  # samples_seen % window and RESEED - samples_seen % RESEED
    cdef double *ring
    cdef double acc[5]
    cdef double mc, ms, sc, ss
    cdef double mrc, mrs, src, srs
    cdef double hb0, hb1, hb2, ha1, ha2, hz1, hz2  # 2nd-order Butterworth high-pass
    cdef readonly double phase, rate_error
    cdef double step0, d_prev
    cdef bint carrier
    cdef int state, bitcount, nchars, plus_at, bad_run
    cdef uint32_t shift, erase
    cdef int64_t bit_index
    cdef int64_t bit_at[8]
    cdef int64_t burst_start, burst_end
    cdef unsigned char chars[272]
    cdef int event_kind, event_len
    cdef int64_t event_start, event_end

    def __cinit__(self, int sample_rate):
        if sample_rate < 1000 or sample_rate > 1000000:
            raise ValueError(f"sample_rate must be within 1000..1000000 Hz, got {sample_rate}")
        self.sample_rate = sample_rate
        self.window = <int>floor(<double>sample_rate * 3.0 / 1562.5 + 0.5)
        self.ring = <double *>malloc(5 * self.window * sizeof(double))
        if self.ring == NULL:
            raise MemoryError()
        cdef int i
        for i in range(5 * self.window):
            self.ring[i] = 0.0
        for i in range(5):
            self.acc[i] = 0.0
        self.mrc = cos(2.0 * M_PI * (6250.0 / 3.0) / <double>sample_rate)
        self.mrs = sin(2.0 * M_PI * (6250.0 / 3.0) / <double>sample_rate)
        self.src = cos(2.0 * M_PI * 1562.5 / <double>sample_rate)
        self.srs = sin(2.0 * M_PI * 1562.5 / <double>sample_rate)
        cdef double w0 = 2.0 * M_PI * HIGHPASS_HZ / <double>sample_rate
        cdef double alpha = sin(w0) / (2.0 * sqrt(0.5))
        cdef double a0 = 1.0 + alpha
        self.hb0 = ((1.0 + cos(w0)) / 2.0) / a0
        self.hb1 = -(1.0 + cos(w0)) / a0
        self.hb2 = self.hb0
        self.ha1 = (-2.0 * cos(w0)) / a0
        self.ha2 = (1.0 - alpha) / a0
        self.hz1 = 0.0
        self.hz2 = 0.0
        self.step0 = 1562.5 / (3.0 * <double>sample_rate)
        self.samples_seen = 0
        self.slot = 0
        self.until_reseed = 0
        self.phase = 0.0
        self.rate_error = 0.0
        self.d_prev = 0.0
        self.carrier = False
        self.state = HUNT
        self.shift = 0
        self.erase = 0xFFFF
        self.bit_index = 0
        self.bitcount = 0
        self.nchars = 0
        self.plus_at = -1
        self.bad_run = 0
        self.burst_start = 0
        self.burst_end = 0
        self.event_len = -1

    def __dealloc__(self):
        free(self.ring)

    @property
    def earliest_pending_start(self):
        """Return a lower bound on the start sample of any burst not yet reported."""
        if self.state == START or self.state == HEADER:
            return self.burst_start
        return self.samples_seen - self.window

    # --- per-sample front end and bit clock ----------------------------------------------

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.cdivision(True)
    cdef Py_ssize_t _run(
        self, const float *samples, Py_ssize_t i, Py_ssize_t n, double *energies
    ) noexcept nogil:
        """Process samples[i:n] until a burst completes; return the index after the last one.

        The state is copied into locals for the loop (stores into the ring could alias fields
        of self, which would keep the compiler from holding them in registers) and written
        back on return. With ``energies`` set only the front end runs, and sample k's mark,
        space and power sums go to energies[k], energies[n + k] and energies[2n + k].
        """
        cdef double a0 = self.acc[0], a1 = self.acc[1], a2 = self.acc[2]
        cdef double a3 = self.acc[3], a4 = self.acc[4]
        cdef double mc = self.mc, ms = self.ms, sc = self.sc, ss = self.ss
        cdef double mrc = self.mrc, mrs = self.mrs, src = self.src, srs = self.srs
        cdef double hb0 = self.hb0, hb1 = self.hb1, hb2 = self.hb2
        cdef double ha1 = self.ha1, ha2 = self.ha2, hz1 = self.hz1, hz2 = self.hz2
        cdef double phase = self.phase, rate_error = self.rate_error, d_prev = self.d_prev
        cdef double step0 = self.step0
        cdef bint carrier = self.carrier, fired = False
        cdef int slot = self.slot, until_reseed = self.until_reseed, window = self.window
        cdef int64_t seen = self.samples_seen, fs = self.sample_rate
        cdef double *ring = self.ring
        cdef double *row
        cdef double x, y, v0, v1, v2, v3, v4, angle, t, em, es, d, q, frac, err, step
        cdef int k
        while i < n:
            x = samples[i]
            if not isfinite(x):
                x = 0.0
            # Mix with both tones and keep one-bit running sums (ring = the last window).
            row = ring + 5 * slot
            if until_reseed == 0:
                # Re-seed the tone oscillators from the exact phase of this sample.
                until_reseed = RESEED
                angle = 2.0 * M_PI * <double>((6250 * seen) % (3 * fs)) / <double>(3 * fs)
                mc = cos(angle)
                ms = sin(angle)
                angle = 2.0 * M_PI * <double>((3125 * seen) % (2 * fs)) / <double>(2 * fs)
                sc = cos(angle)
                ss = sin(angle)
            until_reseed -= 1
            v0 = x * mc
            v1 = x * ms
            v2 = x * sc
            v3 = x * ss
            # The power sum uses the high-passed signal, so an offset or hum is not "noise".
            y = hb0 * x + hz1
            hz1 = hb1 * x - ha1 * y + hz2
            hz2 = hb2 * x - ha2 * y
            if -TINY < hz1 < TINY:
                hz1 = 0.0
            if -TINY < hz2 < TINY:
                hz2 = 0.0
            v4 = y * y
            a0 += v0 - row[0]
            a1 += v1 - row[1]
            a2 += v2 - row[2]
            a3 += v3 - row[3]
            a4 += v4 - row[4]
            row[0] = v0
            row[1] = v1
            row[2] = v2
            row[3] = v3
            row[4] = v4
            if slot == window - 1:
                # The ring holds exactly the last window: re-add it so rounding never builds up.
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                a3 = 0.0
                a4 = 0.0
                for k in range(window):
                    a0 += ring[5 * k]
                    a1 += ring[5 * k + 1]
                    a2 += ring[5 * k + 2]
                    a3 += ring[5 * k + 3]
                    a4 += ring[5 * k + 4]
                slot = 0
            else:
                slot += 1
            t = mc * mrc - ms * mrs
            ms = ms * mrc + mc * mrs
            mc = t
            t = sc * src - ss * srs
            ss = ss * src + sc * srs
            sc = t
            em = a0 * a0 + a1 * a1
            es = a2 * a2 + a3 * a3
            if energies != NULL:
                energies[i] = em
                energies[n + i] = es
                energies[2 * n + i] = a4
                seen += 1
                i += 1
                continue
            # Bit clock: a discriminator zero crossing should fall half a bit before a decision.
            d = em - es
            step = step0 * (1.0 + rate_error)
            phase += step
            if carrier and ((d_prev < 0.0 and d >= 0.0) or (d_prev >= 0.0 and d < 0.0)):
                frac = d_prev / (d_prev - d)
                err = phase - (1.0 - frac) * step - 0.5
                err = err - floor(err + 0.5)
                phase -= GAIN_PHASE * err
                rate_error -= GAIN_RATE * err
                if rate_error > MAX_RATE_ERROR:
                    rate_error = MAX_RATE_ERROR
                elif rate_error < -MAX_RATE_ERROR:
                    rate_error = -MAX_RATE_ERROR
            d_prev = d
            if phase >= 1.0:
                # Decide the bit whose window ends here; little tone energy means an erasure.
                phase -= 1.0
                if a4 < MIN_POWER:
                    q = 0.0
                else:
                    q = (2.0 * (em + es)) / (<double>window * a4)
                carrier = q >= MIN_QUALITY
                if not carrier:
                    rate_error *= RATE_LEAK
                fired = self._on_bit(em > es, not carrier, seen)
            seen += 1
            i += 1
            if fired:
                break
        self.acc[0] = a0
        self.acc[1] = a1
        self.acc[2] = a2
        self.acc[3] = a3
        self.acc[4] = a4
        self.mc = mc
        self.ms = ms
        self.sc = sc
        self.ss = ss
        self.hz1 = hz1
        self.hz2 = hz2
        self.phase = phase
        self.rate_error = rate_error
        self.d_prev = d_prev
        self.carrier = carrier
        self.slot = slot
        self.until_reseed = until_reseed
        self.samples_seen = seen
        return i

    # --- framing -------------------------------------------------------------------------

    cdef bint _on_bit(self, bint bit, bint erased, int64_t at) noexcept nogil:
        """Shift in one decided bit (LSB first); return True when a burst completed."""
        cdef int byte
        self.shift = (self.shift >> 1) | ((<uint32_t>bit) << 15)
        self.erase = (self.erase >> 1) | ((<uint32_t>erased) << 15)
        self.bit_at[self.bit_index & 7] = at
        self.bit_index += 1
        if self.shift == 0xABAB and self.erase == 0 and self.state != HEADER:
            # Two preamble bytes: (re)gain byte alignment, also after a slip inside the preamble.
            self.state = SYNC
            self.bitcount = 0
            return False
        if self.state == HUNT:
            return False
        self.bitcount += 1
        if self.bitcount < 8:
            return False
        self.bitcount = 0
        byte = <int>(self.shift >> 8)
        if self.state == SYNC:
            if byte == 0xAB:
                return False
            self.state = START
            self.nchars = 0
            self.bad_run = 0
            self.burst_start = self.bit_at[(self.bit_index - 8) & 7] - self.window + 1
        return self._on_char(byte, at)

    cdef bint _on_char(self, int byte, int64_t at) noexcept nogil:
        """Store one character of a burst; return True when the burst completed."""
        cdef bint valid = byte < 128 and ALPHABET[byte] != 0
        cdef int i, after, zczc = 0, nnnn = 0
        self.chars[self.nchars] = <unsigned char>byte if valid else 0
        self.nchars += 1
        if valid:
            self.bad_run = 0
            self.burst_end = at + 1
        else:
            self.bad_run += 1
        if self.state == START:
            if self.nchars < 4:
                return False
            for i in range(4):
                zczc += self.chars[i] == (90 if i % 2 == 0 else 67)  # 'Z', 'C'
                nnnn += self.chars[i] == 78  # 'N'
            if nnnn >= 3:
                self.state = HUNT
                # The four characters as read: an EOM is valid only if two bursts read NNNN.
                self._set_event(EVENT_EOM, 4)
                self.event_end = at + 1
                return True
            if zczc >= 3:
                self.state = HEADER
                self.plus_at = -1
                return False
            self.state = HUNT
            return False
        if valid and byte == 43 and self.plus_at < 0:  # '+'
            self.plus_at = self.nchars - 1
        if self.plus_at >= 0:
            # After '+': TTTT-JJJHHMM- (13), a station id of 1-8 characters, then '-'.
            after = self.nchars - self.plus_at - 1
            if after == 22 or (after >= 15 and valid and byte == 45):  # '-'
                return self._end_header()
        if self.bad_run >= 2 or self.nchars >= C_MAX_CHARS:
            return self._end_header()
        return False

    cdef bint _end_header(self) noexcept nogil:
        """Close the header burst in progress, dropping trailing bad characters."""
        self.state = HUNT
        self._set_event(EVENT_HEADER, self.nchars - self.bad_run)
        self.event_end = self.burst_end
        return True

    cdef void _set_event(self, int kind, int length) noexcept nogil:
        self.event_kind = kind
        self.event_len = length
        self.event_start = self.burst_start

    cdef object _take_event(self):
        text = PyBytes_FromStringAndSize(<char *>self.chars, self.event_len)
        event = (self.event_kind, text, self.event_start, self.event_end)
        self.event_len = -1
        return event

    # --- Python face ---------------------------------------------------------------------

    def feed(self, const float[::1] samples):
        """Process a chunk; return the bursts it completed as (kind, text, start, end) tuples.

        ``kind`` is KIND_HEADER or KIND_EOM; ``text`` holds the raw characters (NUL where a
        character was unreadable); ``start``/``end`` are absolute sample offsets (end
        exclusive). Releases the GIL while it runs.
        """
        cdef Py_ssize_t i = 0, n = samples.shape[0]
        events = []
        if n == 0:
            return events
        cdef const float *data = &samples[0]
        while i < n:
            with nogil:
                i = self._run(data, i, n, NULL)
            if self.event_len >= 0:
                events.append(self._take_event())
        return events

    def finish(self):
        """Return the header burst still in progress at the end of the stream, if any."""
        if self.state == HEADER and self.nchars - self.bad_run > 0:
            self._end_header()
            return [self._take_event()]
        self.state = HUNT
        return []

    def energies(self, const float[::1] samples):
        """Feed a chunk through the mixer only; return per-sample (mark, space, power) sums.

        Mark and space are the squared magnitudes of the signal correlated with each tone over
        the last ``window`` samples; power is the sum of squares of the high-passed signal over
        the same window. For tests: a demodulator used here must not decode afterwards.
        """
        cdef Py_ssize_t n = samples.shape[0]
        out = np.empty((3, n), dtype=np.float64)
        cdef double[:, ::1] view = out
        if n > 0:
            with nogil:
                self._run(&samples[0], 0, n, &view[0, 0])
        return out
