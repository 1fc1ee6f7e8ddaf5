# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Audio levels in one pass: per-block RMS and peak in dBFS, clipping, and silence with hysteresis.

The compiled twin of ``alertstation.audio.levels.PyLevelMeter``: same blocks, same sums in the
same order, same silence rule, same results to the bit. Product code imports ``LevelMeter`` from
``alertstation.audio.levels``, which checks its arguments and picks this class when it is built.

Samples are signed 16-bit (scaled by 1/32768) or 32-bit float (full scale 1.0), fed in chunks of
any length; a block that a chunk leaves unfinished is finished by the next one. NaN counts as 0.
int16 blocks are summed in exact integers (a sample clips from ``ceil(clip_level * 32768)``);
float32 blocks in doubles, in sample order. One meter takes one sample type.
"""

cimport cython
from libc.math cimport ceil, fabs, log10

import numpy as np

cdef double FLOOR_DBFS = -120.0
cdef double INT16_SCALE = 1.0 / 32768.0
cdef double INT16_SCALE_SQ = 1.0 / 1073741824.0  # 1 / 32768 ** 2

ctypedef fused sample_t:
    short
    float


@cython.final
cdef class LevelMeter:
    """Per-block levels and silence events over a stream of samples fed in chunks."""

    cdef readonly Py_ssize_t block_size
    cdef readonly double threshold_dbfs
    cdef readonly long long min_silence_samples
    cdef readonly double hysteresis_db
    cdef readonly double clip_level
    cdef readonly long long position  # samples consumed so far
    cdef readonly bint silent
    cdef double _sum_sq  # float32 input: sum of squares and peak of the open block
    cdef double _peak
    cdef long long _isum  # int16 input: the same, in exact integers
    cdef int _itop
    cdef int _iclip  # int16 magnitude from which a sample counts as clipped
    cdef int _type  # 0 before the first chunk, 1 int16, 2 float32
    cdef long long _clipped
    cdef Py_ssize_t _filled
    cdef long long _quiet_start
    cdef long long _quiet_len

    def __init__(
        self,
        Py_ssize_t block_size,
        double threshold_dbfs,
        long long min_silence_samples,
        double hysteresis_db,
        double clip_level,
    ):
        if block_size < 1 or min_silence_samples < 0 or not hysteresis_db >= 0:
            raise ValueError("block_size >= 1, min_silence_samples >= 0, hysteresis_db >= 0")
        self.block_size = block_size
        self.threshold_dbfs = threshold_dbfs
        self.min_silence_samples = min_silence_samples
        self.hysteresis_db = hysteresis_db
        self.clip_level = clip_level
        self.position = 0
        self.silent = False
        self._sum_sq = 0.0
        self._peak = 0.0
        self._isum = 0
        self._itop = 0
        self._iclip = <int>ceil(clip_level * 32768.0)
        self._type = 0
        self._clipped = 0
        self._filled = 0
        self._quiet_start = 0
        self._quiet_len = 0

    def feed_int16(self, const short[::1] samples):
        """Feed int16 samples; return (rms_dbfs, peak_dbfs, clipped, events) of finished blocks."""
        self._check_type(1)
        return self._feed(samples, INT16_SCALE)

    def feed_float32(self, const float[::1] samples):
        """Feed float32 samples; return (rms_dbfs, peak_dbfs, clipped, events) of finished blocks."""
        self._check_type(2)
        return self._feed(samples, 1.0)

    cdef _check_type(self, int kind):
        if self._type and self._type != kind:
            raise ValueError("a meter takes one sample type: int16 or float32, not both")
        self._type = kind

    cdef object _feed(self, const sample_t[::1] samples, double scale):
        cdef Py_ssize_t n = samples.shape[0]
        cdef Py_ssize_t blocks = (self._filled + n) // self.block_size
        rms_out = np.empty(blocks, dtype=np.float64)
        peak_out = np.empty(blocks, dtype=np.float64)
        clip_out = np.empty(blocks, dtype=np.int64)
        kinds_out = np.zeros(blocks, dtype=np.int8)
        at_out = np.zeros(blocks, dtype=np.int64)
        cdef double[::1] rms = rms_out
        cdef double[::1] peak = peak_out
        cdef long long[::1] clip = clip_out
        cdef signed char[::1] kinds = kinds_out
        cdef long long[::1] at = at_out
        cdef Py_ssize_t i = 0, take, done = 0
        cdef Py_ssize_t block_size = self.block_size
        cdef long long position = self.position
        cdef const sample_t* data = &samples[0] if n > 0 else NULL
        with nogil:
            while i < n:
                take = block_size - self._filled
                if take > n - i:
                    take = n - i
                if sample_t is short:
                    self._add_int16(data + i, take)
                else:
                    self._add_float32(data + i, take)
                self._filled += take
                i += take
                if self._filled == block_size:
                    self._finish(
                        position + i - block_size,
                        &rms[done],
                        &peak[done],
                        &clip[done],
                        &kinds[done],
                        &at[done],
                    )
                    done += 1
        self.position = position + n
        events = [
            ("start" if kinds[k] == 1 else "end", int(at[k])) for k in range(blocks) if kinds[k]
        ]
        return rms_out, peak_out, clip_out, events

    cdef inline void _add_int16(self, const short* data, Py_ssize_t count) noexcept nogil:
        # Integers are exact: the sum of squares of a block needs no rounding at all.
        cdef long long sum_sq = self._isum
        cdef int top = self._itop
        cdef int clip_at = self._iclip
        cdef long long clipped = 0
        cdef int s, a
        cdef Py_ssize_t j
        for j in range(count):
            s = data[j]
            a = s if s >= 0 else -s
            sum_sq += s * s
            top = a if a > top else top
            clipped += a >= clip_at
        self._isum = sum_sq
        self._itop = top
        self._clipped += clipped

    cdef inline void _add_float32(self, const float* data, Py_ssize_t count) noexcept nogil:
        cdef double sum_sq = self._sum_sq
        cdef double top = self._peak
        cdef double clip_level = self.clip_level
        cdef long long clipped = 0
        cdef double v, a
        cdef Py_ssize_t j
        for j in range(count):
            v = data[j]
            if v != v:
                v = 0.0
            sum_sq += v * v
            a = fabs(v)
            if a > top:
                top = a
            if a >= clip_level:
                clipped += 1
        self._sum_sq = sum_sq
        self._peak = top
        self._clipped += clipped

    cdef inline void _finish(
        self,
        long long block_start,
        double* rms,
        double* peak,
        long long* clip,
        signed char* kind,
        long long* at,
    ) noexcept nogil:
        cdef double mean, top, rms_db, peak_db
        if self._isum or self._itop:
            mean = (<double>self._isum) * INT16_SCALE_SQ / self.block_size
            top = self._itop * INT16_SCALE
        else:
            mean = self._sum_sq / self.block_size
            top = self._peak
        rms_db = 10.0 * log10(mean) if mean > 0.0 else FLOOR_DBFS
        peak_db = 20.0 * log10(top) if top > 0.0 else FLOOR_DBFS
        if rms_db < FLOOR_DBFS:
            rms_db = FLOOR_DBFS
        if peak_db < FLOOR_DBFS:
            peak_db = FLOOR_DBFS
        rms[0] = rms_db
        peak[0] = peak_db
        clip[0] = self._clipped
        self._silence(rms_db, block_start, kind, at)
        self._sum_sq = 0.0
        self._peak = 0.0
        self._isum = 0
        self._itop = 0
        self._clipped = 0
        self._filled = 0

    cdef inline void _silence(
        self, double rms_db, long long block_start, signed char* kind, long long* at
    ) noexcept nogil:
        if not self.silent:
            if rms_db < self.threshold_dbfs:
                if self._quiet_len == 0:
                    self._quiet_start = block_start
                self._quiet_len += self.block_size
                if self._quiet_len >= self.min_silence_samples:
                    self.silent = True
                    kind[0] = 1
                    at[0] = self._quiet_start
            else:
                self._quiet_len = 0
        elif rms_db >= self.threshold_dbfs + self.hysteresis_db:
            self.silent = False
            self._quiet_len = 0
            kind[0] = 2
            at[0] = block_start
