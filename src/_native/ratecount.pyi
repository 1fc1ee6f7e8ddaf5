"""Per-address request counts over a sliding window, in bounded memory (the flood counter).

Import ``RateCounter`` from ``alertstation.security.autoban.counter``, which picks this class
when it is built; ``PyRateCounter`` there is its pure-Python twin.
"""

class RateCounter:
    """Per-address request counts over a sliding window, with a cap on the addresses kept."""

    window: float
    def __init__(
        self, window: float, *, batch: int = 0, slices: int = 10, capacity: int = 10_000
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def batch(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    def hit(self, address: str, now: float) -> tuple[int, float | None]:
        """Count one request; return the count within the window and a completed batch's start."""
    def count(self, address: str, now: float) -> int:
        """Return the requests from ``address`` within the window at ``now``; counts nothing."""
    def forget(self, address: str) -> None:
        """Drop everything known about ``address``."""
