"""Audio levels in one pass: per-block RMS and peak in dBFS, clipping, and silence with hysteresis.

Import ``LevelMeter`` from ``alertstation.audio.levels``, which checks its arguments and picks
this class when it is built; ``PyLevelMeter`` there is its pure-Python twin.
"""

from typing import Any

import numpy as np
import numpy.typing as npt

class LevelMeter:
    """Per-block levels and silence events over a stream of samples fed in chunks."""

    block_size: int
    threshold_dbfs: float
    min_silence_samples: int
    hysteresis_db: float
    clip_level: float
    position: int
    silent: bool
    def __init__(
        self,
        block_size: int,
        threshold_dbfs: float,
        min_silence_samples: int,
        hysteresis_db: float,
        clip_level: float,
    ) -> None: ...
    def feed_int16(
        self, samples: npt.NDArray[np.int16]
    ) -> tuple[Any, Any, Any, list[tuple[str, int]]]:
        """Feed int16 samples; return (rms_dbfs, peak_dbfs, clipped, events) of finished blocks."""
    def feed_float32(
        self, samples: npt.NDArray[np.float32]
    ) -> tuple[Any, Any, Any, list[tuple[str, int]]]:
        """Feed float32 samples; return (rms_dbfs, peak_dbfs, clipped, events) of full blocks."""
