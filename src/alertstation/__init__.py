"""Alert Station: a self-hosted Emergency Alert System station."""

from alertstation.version import __version__

__all__ = ["__version__"]
