"""The EAS station log's table (47 CFR 11.35).

``eas_log`` holds one row per entry: what happened (``kind``, one of
:data:`alertstation.eas.log.record.KINDS`), when (``at``, UTC), where it came from (``source``:
``audio:<id>``, ``poll:<id>``, ``station``, ``operator``), the SAME ``header`` and its
plain-language ``text`` as it read at that moment (so a later time-zone change never rewrites the
log), the event code, the ``result`` (an airing's ``aired``, ``archived_only``, ``failed``,
``stopped``...; a received header's ``duplicate`` or ``refused``), who (``by``), the details as
JSON (bursts, refusal reason, per-output results, a note's text, a review's period) and, for a
``correction``, the entry it corrects (``corrects_id``).

Entries are only ever added: no route updates or deletes one, and no retention setting prunes
them (11.35 asks for two years). The table names no prunable table by foreign key, so pruning
received messages or deleting archived ones leaves the log whole.
"""

from sqlalchemy import Column, ForeignKey, Index, Integer, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

eas_log = Table(
    "eas_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("at", UTCDateTime(), nullable=False),
    Column("source", String(64), nullable=True),
    Column("event_code", String(3), nullable=True),
    Column("header", Text, nullable=True),
    Column("text", Text, nullable=True),
    Column("result", String(32), nullable=True),
    Column("by", String(64), nullable=True),
    Column("details", Text, nullable=False),
    Column("corrects_id", Integer, ForeignKey("eas_log.id"), nullable=True),
    Index("ix_eas_log_at", "at"),
)
