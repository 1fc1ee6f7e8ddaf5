"""Continuous-phase AFSK for SAME bursts, attention tones and int16 PCM conversion.

Call these through ``alertstation.eas.kernels``, which validates input first.
"""

import numpy as np
import numpy.typing as npt

_Bytes = bytes | bytearray | memoryview

SAME_BAUD: float  # 1562.5 / 3 = 520 5/6 bit/s
MARK_HZ: float  # 6250 / 3 = 2083 1/3 Hz, bit 1
SPACE_HZ: float  # 1562.5 Hz, bit 0

def afsk_modulate(
    data: _Bytes, sample_rate: float, amplitude: float, phase: float
) -> tuple[npt.NDArray[np.float32], float]:
    """Modulate bytes as continuous-phase SAME AFSK; return (float32 samples, end phase).

    Each byte is sent as its 8 bits, least significant first, exactly as given. Output sample
    ``j`` is ``amplitude * sin(phi_j)`` with ``phi_0 = phase``; bit ``i`` covers samples
    ``round(i*r/b) .. round((i+1)*r/b) - 1`` (r = sample_rate, b = 520 5/6), so there are
    ``round(8*len(data)*r/b)`` samples and no drift. The end phase, in [0, 2*pi), is the phase
    of the sample that would follow: pass it to the next call for a continuous waveform.
    Raises ValueError for a non-positive or non-finite sample rate, or a non-finite amplitude
    or phase. Releases the GIL while it fills the samples.
    """

def tone_mix(
    frequencies: npt.NDArray[np.float64], n_samples: int, sample_rate: float, amplitude: float
) -> npt.NDArray[np.float32]:
    """Return float32 ``amplitude / len(frequencies) * sum(sin(2*pi*f*j / sample_rate))``.

    ``frequencies`` is a 1-D C-contiguous float64 array of at least one tone; ``j`` runs over
    ``0 .. n_samples - 1``; every tone starts at phase zero. Releases the GIL.
    """

def to_int16(samples: npt.NDArray[np.float32], out: npt.NDArray[np.int16], gain: float) -> None:
    """Fill ``out`` with ``samples * gain`` rounded half to even and saturated to +-32767.

    Both arrays are 1-D, C-contiguous and of equal length (else ValueError). NaN becomes 0,
    infinities saturate, -32768 never appears. Releases the GIL.
    """
