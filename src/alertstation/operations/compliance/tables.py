"""Tables of monitoring compliance (47 CFR 11.35, 11.52, 11.61).

``compliance_settings`` is one row (``id`` 1): how many days an assigned source may go without
delivering a weekly or monthly test before its alarm (``silence_days``, 1-31, default 8).
No row means the defaults.

``compliance_assignments`` holds the sources a state EAS plan assigns the station to monitor:
``audio:<id>`` (an audio source) or ``poll:<id>`` (a CAP poll source), with when and by whom
each was assigned. A source deleted later simply drops out of the compliance view.

``compliance_alarms`` holds one row per alarm raised by the compliance job: its ``kind``
(``source_silent``, ``rmt_unaired``, ``station_test``), the ``source`` it concerns
(``audio:<id>``, ``poll:<id>``, ``station`` or ``rmt:<deadline id>``), a ``detail`` line,
``raised_at`` and ``cleared_at`` (null while open). At most one alarm of a kind and source is
open at a time.

``rmt_deadlines`` holds one row per Required Monthly Test heard for the station's area: the
message (``message_key``: the header without the sender's station id, unique, so the same
header heard on another source does not restart it), the first ``header`` heard and its
``received_id`` and ``source_id``, ``started_at`` (when it was first received) and ``due_at``
(60 minutes later), ``aired_at`` (when the station's relay of it started airing, result
``aired``) and ``met`` (null until decided: true when aired by ``due_at``, false when the
deadline passed unaired).
"""

from sqlalchemy import (
    Boolean,
    Column,
    Index,
    Integer,
    String,
    Table,
    UniqueConstraint,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

SOURCE_WIDTH = 32
KIND_WIDTH = 32
DETAIL_WIDTH = 500
HEADER_WIDTH = 300

compliance_settings = Table(
    "compliance_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("silence_days", Integer, nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

compliance_assignments = Table(
    "compliance_assignments",
    metadata,
    Column("source", String(SOURCE_WIDTH), primary_key=True),
    Column("assigned_by", String(64), nullable=True),
    Column("assigned_at", UTCDateTime, nullable=False),
)

compliance_alarms = Table(
    "compliance_alarms",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(KIND_WIDTH), nullable=False),
    Column("source", String(SOURCE_WIDTH), nullable=False),
    Column("detail", String(DETAIL_WIDTH), nullable=False),
    Column("raised_at", UTCDateTime, nullable=False),
    Column("cleared_at", UTCDateTime, nullable=True),
    Index("ix_compliance_alarms_open", "kind", "source", "cleared_at"),
)

rmt_deadlines = Table(
    "rmt_deadlines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_key", String(HEADER_WIDTH), nullable=False),
    Column("header", String(HEADER_WIDTH), nullable=False),
    Column("received_id", Integer, nullable=True),
    Column("source_id", Integer, nullable=True),
    Column("started_at", UTCDateTime, nullable=False),
    Column("due_at", UTCDateTime, nullable=False),
    Column("aired_at", UTCDateTime, nullable=True),
    Column("met", Boolean, nullable=True),
    UniqueConstraint("message_key"),
    Index("ix_rmt_deadlines_started_at", "started_at"),
)

__all__ = ["compliance_alarms", "compliance_assignments", "compliance_settings", "rmt_deadlines"]
