"""Tables of the alert poller: configured sources and their health."""

from alertstation.db.metadata import metadata  # noqa: F401
