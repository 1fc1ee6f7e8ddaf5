"""Tables of auto-forward and the weekly RWT schedule."""

from alertstation.db.metadata import metadata  # noqa: F401
