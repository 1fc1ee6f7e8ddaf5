# cython: language_level=3
"""Continuous-phase AFSK for SAME bursts, attention tones and int16 PCM conversion.

SAME (47 CFR 11.31) keys 520 5/6 bit/s with mark 2083 1/3 Hz (bit 1) and space 1562.5 Hz
(bit 0). Both tones are whole multiples of a quarter of the bit rate (4 and 3 cycles per bit),
and a bit lasts a fractional number of samples at most sample rates, so bit boundaries are
computed from the bit index (never accumulated) and the phase is carried as a double.

Product code calls ``alertstation.eas.kernels``, which validates input before it gets here.
"""

cimport cython
from libc.math cimport M_PI, cos, floor, fmod, isfinite, sin

import numpy as np

cdef double TWO_PI = 2.0 * M_PI
cdef double C_MARK_HZ = 6250.0 / 3.0
cdef double C_SPACE_HZ = 1562.5
# A tone block: the phase is re-seeded from the sample index at the start of every block.
cdef Py_ssize_t TONE_BLOCK = 256

SAME_BAUD = 1562.5 / 3.0
MARK_HZ = 6250.0 / 3.0
SPACE_HZ = 1562.5


cdef inline double _wrap(double phase) noexcept nogil:
    """Fold a finite phase into [0, 2*pi)."""
    phase = fmod(phase, TWO_PI)
    if phase < 0.0:
        phase += TWO_PI
    if phase >= TWO_PI:
        phase = 0.0
    return phase


cdef inline Py_ssize_t _bit_edge(Py_ssize_t index, double sample_rate) noexcept nogil:
    """Return the first sample of bit ``index``: round(index * sample_rate / baud)."""
    return <Py_ssize_t>floor(<double>index * sample_rate * 3.0 / 1562.5 + 0.5)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
@cython.cdivision(True)
cdef void _fill_rotations(double[:, ::1] table, Py_ssize_t row, double step) noexcept nogil:
    """Store cos(k*step) in ``table[row]`` and sin(k*step) in ``table[row + 1]``."""
    cdef Py_ssize_t k
    for k in range(table.shape[1]):
        table[row, k] = cos(<double>k * step)
        table[row + 1, k] = sin(<double>k * step)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
@cython.cdivision(True)
cdef double _modulate(
    const unsigned char[::1] data,
    double sample_rate,
    double amplitude,
    double phase,
    const double[:, ::1] table,
    float[::1] out,
) noexcept nogil:
    """Write the AFSK samples of ``data`` (8 bits a byte, LSB first) and return the end phase."""
    cdef double mark_step = TWO_PI * C_MARK_HZ / sample_rate
    cdef double space_step = TWO_PI * C_SPACE_HZ / sample_rate
    cdef double step, s0, c0
    cdef Py_ssize_t i, k, n, start = 0, stop
    cdef Py_ssize_t row
    cdef int bit
    cdef unsigned char byte
    for i in range(data.shape[0]):
        byte = data[i]
        for bit in range(8):
            stop = _bit_edge(i * 8 + bit + 1, sample_rate)
            n = stop - start
            if (byte >> bit) & 1:
                row = 0
                step = mark_step
            else:
                row = 2
                step = space_step
            # sin(phase + k*step) = sin(phase)cos(k*step) + cos(phase)sin(k*step): exact per
            # sample, no recurrence to drift, and the inner loop has no dependency chain.
            s0 = sin(phase)
            c0 = cos(phase)
            for k in range(n):
                out[start + k] = <float>(amplitude * (s0 * table[row, k] + c0 * table[row + 1, k]))
            phase = _wrap(phase + <double>n * step)
            start = stop
    return phase


def afsk_modulate(
    const unsigned char[::1] data, double sample_rate, double amplitude, double phase
):
    """Modulate bytes as continuous-phase SAME AFSK; return (float32 samples, end phase).

    Every byte is sent as its 8 bits, least significant first, exactly as given (the caller
    chooses the eighth bit). Sample ``j`` of the output is ``amplitude * sin(phi_j)`` where
    ``phi_0`` is ``phase``; the returned end phase, in [0, 2*pi), is the phase of the sample
    that would follow, so passing it to the next call keeps the waveform continuous. Bit ``i``
    covers samples ``round(i*r/b) .. round((i+1)*r/b) - 1`` (r = sample rate, b = 520 5/6).
    """
    if not (isfinite(sample_rate) and sample_rate > 0.0):
        raise ValueError(f"sample_rate must be a positive finite number, got {sample_rate!r}")
    if not isfinite(amplitude):
        raise ValueError(f"amplitude must be finite, got {amplitude!r}")
    if not isfinite(phase):
        raise ValueError(f"phase must be finite, got {phase!r}")
    cdef Py_ssize_t n_samples = _bit_edge(data.shape[0] * 8, sample_rate)
    # round(y + x) - round(y) <= floor(x) + 1, so a bit never spans more than width - 1 samples.
    cdef Py_ssize_t width = <Py_ssize_t>(sample_rate * 3.0 / 1562.5) + 2
    out = np.empty(n_samples, dtype=np.float32)
    rotations = np.empty((4, width), dtype=np.float64)
    cdef float[::1] out_view = out
    cdef double[:, ::1] table = rotations
    cdef double end_phase
    with nogil:
        _fill_rotations(table, 0, TWO_PI * C_MARK_HZ / sample_rate)
        _fill_rotations(table, 2, TWO_PI * C_SPACE_HZ / sample_rate)
        end_phase = _modulate(data, sample_rate, amplitude, _wrap(phase), table, out_view)
    return out, end_phase


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
@cython.cdivision(True)
cdef void _tone_mix(
    const double[::1] frequencies,
    double sample_rate,
    double weight,
    const double[:, ::1] table,
    double[::1] acc,
    float[::1] out,
) noexcept nogil:
    """Write ``weight * sum(sin(2*pi*f*j/sample_rate))`` over the tones into ``out``."""
    cdef Py_ssize_t n_samples = out.shape[0]
    cdef Py_ssize_t start, k, n, t
    cdef double cycles, phase, s0, c0
    start = 0
    while start < n_samples:
        n = min(TONE_BLOCK, n_samples - start)
        for k in range(n):
            acc[k] = 0.0
        for t in range(frequencies.shape[0]):
            # Re-seed from the sample index so long tones carry no accumulated phase error.
            cycles = frequencies[t] * <double>start / sample_rate
            phase = TWO_PI * (cycles - floor(cycles))
            s0 = sin(phase)
            c0 = cos(phase)
            for k in range(n):
                acc[k] += s0 * table[2 * t, k] + c0 * table[2 * t + 1, k]
        for k in range(n):
            out[start + k] = <float>(weight * acc[k])
        start += n


def tone_mix(
    const double[::1] frequencies, Py_ssize_t n_samples, double sample_rate, double amplitude
):
    """Return float32 ``amplitude / len(frequencies) * sum(sin(2*pi*f*j / sample_rate))``.

    Sample ``j`` runs from 0 to ``n_samples - 1``; every tone starts at phase zero, and the
    mix of all tones peaks at most at ``amplitude``.
    """
    cdef Py_ssize_t n_tones = frequencies.shape[0]
    cdef Py_ssize_t t
    if n_tones < 1:
        raise ValueError("frequencies must hold at least one tone")
    if n_samples < 0:
        raise ValueError(f"n_samples must be >= 0, got {n_samples}")
    if not (isfinite(sample_rate) and sample_rate > 0.0):
        raise ValueError(f"sample_rate must be a positive finite number, got {sample_rate!r}")
    if not isfinite(amplitude):
        raise ValueError(f"amplitude must be finite, got {amplitude!r}")
    for t in range(n_tones):
        if not isfinite(frequencies[t]):
            raise ValueError(f"frequencies[{t}] must be finite, got {frequencies[t]!r}")
    out = np.empty(n_samples, dtype=np.float32)
    rotations = np.empty((2 * n_tones, TONE_BLOCK), dtype=np.float64)
    scratch = np.empty(TONE_BLOCK, dtype=np.float64)
    cdef float[::1] out_view = out
    cdef double[:, ::1] table = rotations
    cdef double[::1] acc = scratch
    with nogil:
        for t in range(n_tones):
            _fill_rotations(table, 2 * t, TWO_PI * frequencies[t] / sample_rate)
        _tone_mix(frequencies, sample_rate, amplitude / <double>n_tones, table, acc, out_view)
    return out


cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    /* to_int16: scale, drop NaN to 0, saturate to +-32767, round half to even. One pass.
       The product of a float32 and the wrapper's gain of 32767 is exact in a double (24 + 15
       significant bits), so every path below computes the reference's float64 result.
       x86-64: SSE2 (always present) or AVX2 (picked at run time) convert with the MXCSR
       rounding mode, which Python leaves at its default, round half to even. */
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    static inline int16_t as_to_int16_one(float x, double gain) {
        double v = (double)x * gain;
        v = v == v ? v : 0.0;
        v = v > 32767.0 ? 32767.0 : v;
        v = v < -32767.0 ? -32767.0 : v;
        return (int16_t)_mm_cvtsd_si32(_mm_set_sd(v));
    }
    __attribute__((target("avx2")))
    static void as_to_int16_avx2(const float *src, int16_t *dst, Py_ssize_t n, double gain) {
        const __m256d g = _mm256_set1_pd(gain);
        const __m256d hi = _mm256_set1_pd(32767.0), lo = _mm256_set1_pd(-32767.0);
        Py_ssize_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256 f = _mm256_loadu_ps(src + i);
            __m256d a = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(f)), g);
            __m256d b = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)), g);
            /* NaN lanes compare unordered: the mask clears them to +0.0. */
            a = _mm256_and_pd(a, _mm256_cmp_pd(a, a, _CMP_ORD_Q));
            b = _mm256_and_pd(b, _mm256_cmp_pd(b, b, _CMP_ORD_Q));
            a = _mm256_max_pd(_mm256_min_pd(a, hi), lo);
            b = _mm256_max_pd(_mm256_min_pd(b, hi), lo);
            _mm_storeu_si128((__m128i *)(dst + i),
                             _mm_packs_epi32(_mm256_cvtpd_epi32(a), _mm256_cvtpd_epi32(b)));
        }
        for (; i < n; i++) dst[i] = as_to_int16_one(src[i], gain);
    }
    static void as_to_int16_sse2(const float *src, int16_t *dst, Py_ssize_t n, double gain) {
        const __m128d g = _mm_set1_pd(gain);
        const __m128d hi = _mm_set1_pd(32767.0), lo = _mm_set1_pd(-32767.0);
        Py_ssize_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m128i half[2];
            for (int h = 0; h < 2; h++) {
                __m128 f = _mm_loadu_ps(src + i + 4 * h);
                __m128d a = _mm_mul_pd(_mm_cvtps_pd(f), g);
                __m128d b = _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(f, f)), g);
                a = _mm_and_pd(a, _mm_cmpord_pd(a, a));
                b = _mm_and_pd(b, _mm_cmpord_pd(b, b));
                a = _mm_max_pd(_mm_min_pd(a, hi), lo);
                b = _mm_max_pd(_mm_min_pd(b, hi), lo);
                half[h] = _mm_unpacklo_epi64(_mm_cvtpd_epi32(a), _mm_cvtpd_epi32(b));
            }
            _mm_storeu_si128((__m128i *)(dst + i), _mm_packs_epi32(half[0], half[1]));
        }
        for (; i < n; i++) dst[i] = as_to_int16_one(src[i], gain);
    }
    static void as_to_int16(const float *src, int16_t *dst, Py_ssize_t n, double gain) {
        if (__builtin_cpu_supports("avx2")) as_to_int16_avx2(src, dst, n, gain);
        else as_to_int16_sse2(src, dst, n, gain);
    }
    #else
    static void as_to_int16(const float *src, int16_t *dst, Py_ssize_t n, double gain) {
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = (double)src[i] * gain;
            v = v == v ? v : 0.0;
            v = v > 32767.0 ? 32767.0 : v;
            v = v < -32767.0 ? -32767.0 : v;
            dst[i] = (int16_t)rint(v);
        }
    }
    #endif
    """
    void as_to_int16(const float* src, short* dst, Py_ssize_t n, double gain) noexcept nogil


def to_int16(const float[::1] samples, short[::1] out, double gain):
    """Fill ``out`` with ``samples * gain`` rounded half to even and saturated to +-32767.

    The scale is symmetric, so -32768 never appears; NaN samples become 0 and infinities
    saturate. ``out`` must be as long as ``samples``.
    """
    if samples.shape[0] != out.shape[0]:
        raise ValueError(
            f"out holds {out.shape[0]} samples but samples holds {samples.shape[0]}"
        )
    if not isfinite(gain):
        raise ValueError(f"gain must be finite, got {gain!r}")
    cdef Py_ssize_t n = samples.shape[0]
    if n == 0:
        return
    with nogil:
        as_to_int16(&samples[0], &out[0], n, gain)
