"""Tables of the airing queue."""

from alertstation.db.metadata import metadata  # noqa: F401
