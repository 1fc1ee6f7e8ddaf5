"""Platform tables that belong to no single domain."""

from sqlalchemy import BigInteger, Column, String, Table

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

# One row per cache that mirrors a table; every mutation of that table bumps its value.
generations = Table(
    "generations",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
