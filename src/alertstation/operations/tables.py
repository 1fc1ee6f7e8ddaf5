"""Tables of the operations package."""

from alertstation.db.metadata import metadata

__all__ = ["metadata"]
