"""The station boundary: one row (id 1) holding the uploaded area as a GeoJSON geometry.

Each alert's match reason lives on ``cap_alerts`` (``match_code``, ``match_geometry``), beside the
``in_area`` flag it explains.
"""

from sqlalchemy import Column, Float, Integer, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

BOUNDARY_ROW = 1
NAME_WIDTH = 200

station_boundary = Table(
    "station_boundary",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    # Counts uploads: readers keep the parsed area until it changes (no need to read the text).
    Column("revision", Integer, nullable=False),
    Column("name", String(NAME_WIDTH), nullable=False),
    Column("geojson", Text, nullable=False),
    Column("vertex_count", Integer, nullable=False),
    Column("min_lon", Float, nullable=False),
    Column("min_lat", Float, nullable=False),
    Column("max_lon", Float, nullable=False),
    Column("max_lat", Float, nullable=False),
    Column("uploaded_by", String(64), nullable=True),
    Column("uploaded_at", UTCDateTime, nullable=False),
)
