"""Tables of the zone catalog: UGC zones, the files they came from, counties and subdivisions.

``wx_zones`` holds one row per (zone_code, zone_type): public, marine and fire-weather zones are
first-class families, so a public file and a fire-weather file that share codes load together.
``county_fips`` and ``county_subdivisions`` hold the county index built from the partial-counties
file; ``zone_sources`` remembers which file each family was last synced from.

Text columns are wide on purpose: the agency's files are wider than their documentation says
(NAME C(254), SHORTNAME C(32), CWA C(9)), and names are never truncated.
"""

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

wx_zones = Table(
    "wx_zones",
    metadata,
    Column("zone_code", String(16), nullable=False),
    Column("zone_type", String(8), nullable=False),
    Column("state_code", String(8), nullable=False),
    Column("zone_number", String(16), nullable=False),
    Column("cwa", String(16), nullable=False),
    Column("time_zone", String(8), nullable=False),
    Column("fe_area", String(8), nullable=False),
    Column("name", Text, nullable=False),
    Column("state_zone", String(16), nullable=False),
    Column("longitude", Float, nullable=True),
    Column("latitude", Float, nullable=True),
    Column("short_name", Text, nullable=False),
    PrimaryKeyConstraint("zone_code", "zone_type"),
)

# One row per family ("public", "marine", "fire", "partial"): the file last applied.
zone_sources = Table(
    "zone_sources",
    metadata,
    Column("family", String(16), primary_key=True),
    Column("file_name", String(255), nullable=False),
    Column("file_size", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("record_count", Integer, nullable=False),
    Column("row_count", Integer, nullable=False),
    Column("applied_at", UTCDateTime, nullable=False),
)

# One row per county (5-digit state+county FIPS), from the partial-counties file.
county_fips = Table(
    "county_fips",
    metadata,
    Column("fips", String(5), primary_key=True),
    Column("state_code", String(8), nullable=False),
    Column("county_name", Text, nullable=False),
    Column("cwa", String(16), nullable=False),
    Column("time_zone", String(8), nullable=False),
    Column("fe_area", String(8), nullable=False),
    Column("longitude", Float, nullable=True),
    Column("latitude", Float, nullable=True),
)

# One row per SAME code PSSCCC whose P is not 0: a named part of a county.
county_subdivisions = Table(
    "county_subdivisions",
    metadata,
    Column("same_code", String(6), primary_key=True),
    Column("county_fips", String(5), nullable=False),
    Column("part", SmallInteger, nullable=False),
    Column("name", Text, nullable=False),
    Column("longitude", Float, nullable=True),
    Column("latitude", Float, nullable=True),
    Index("ix_county_subdivisions_county_fips", "county_fips"),
)


def column_widths(table: Table) -> dict[str, int]:
    """Return the declared width of every bounded string column of ``table``."""
    return {
        column.name: int(column.type.length)
        for column in table.columns
        if isinstance(column.type, String) and not isinstance(column.type, Text)
        if column.type.length
    }
