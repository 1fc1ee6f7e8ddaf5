"""Tables of the saved-settings package.

``operations_settings`` holds one row per settings section (application, hardware,
text-to-speech, decoder feed): its values as a JSON object, who saved it and when. A section
with no row has its defaults (``alertstation.settings_admin.sections``). It lives here, below
eas and audio, so the layers that act on the settings can read them.
"""

from sqlalchemy import Column, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

operations_settings = Table(
    "operations_settings",
    metadata,
    Column("section", String(32), primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

__all__ = ["metadata", "operations_settings"]
