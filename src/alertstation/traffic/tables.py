"""Tables of the traffic package."""

from alertstation.db.metadata import metadata

__all__ = ["metadata"]
