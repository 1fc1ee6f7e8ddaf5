"""Tables of manual EAS: operator-made activations and the archive of every aired message.

``eas_activations`` holds what an operator composed (event, originator, location codes, purge
time, station id, voice text or an uploaded WAV kept under the data directory); ``state`` is
``draft`` until sent, ``sent`` once aired at least once and ``deleted`` after a purge (the row
stays so archive rows keep their reference). ``eas_archive`` holds one row per aired message:
the exact header sent, the WAV file under ``<data_dir>/eas-archive/`` and who aired it when.
"""

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

ACTIVATION_STATES = ("draft", "sent", "deleted")

eas_activations = Table(
    "eas_activations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event", String(3), nullable=False),
    Column("org", String(3), nullable=False),
    Column("locations", Text, nullable=False),  # PSSCCC codes joined by "-", header order
    Column("purge", String(4), nullable=False),  # TTTT, e.g. "0100"
    Column("station_id", String(8), nullable=False),
    Column("voice_text", Text, nullable=True),
    Column("has_audio", Boolean, nullable=False),
    Column("created_by", String(64), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("state", String(8), nullable=False),
)

eas_archive = Table(
    "eas_archive",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "activation_id",
        Integer,
        ForeignKey("eas_activations.id", ondelete="SET NULL"),
        nullable=True,
    ),
    Column("header", Text, nullable=False),
    Column("wav_path", String(255), nullable=False),  # relative to <data_dir>/eas-archive
    Column("sample_rate", Integer, nullable=False),
    Column("duration", Float, nullable=False),  # seconds
    Column("aired_by", String(64), nullable=True),
    Column("aired_at", UTCDateTime(), nullable=False),
)

Index("ix_eas_archive_aired_at", eas_archive.c.aired_at)
