"""Alert Station: a self-hosted Emergency Alert System station."""

from typing import Any

from alertstation import lazy

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """Read ``__version__`` on first use: finding it loads ``importlib.metadata`` (about 4 MiB),
    which the ``run`` supervisor never needs."""
    if name == "__version__":
        return lazy.load("alertstation.version").__version__
    raise AttributeError(f"module 'alertstation' has no attribute {name!r}")
