"""Tables of the audio package."""

from alertstation.db.metadata import metadata

__all__ = ["metadata"]
