"""Tables of auto-forward and the weekly RWT schedule.

``eas_forward_settings`` is a single row (``id`` 1) holding how forwarded alerts air: the master
switch, the station id, the attention signal and the longest wait in the queue. No row means
the defaults of :mod:`alertstation.eas.forward.config` (auto-forward off).

``eas_forward_airings`` records, per forward-queue entry the EAS side took
(``eas_forward_queue.state = 'taken'``), who claimed it and when, the header it built and the
archived message it aired as (``eas_archive``), or the error when airing failed. A taken entry
without ``aired_at`` was claimed by a worker that stopped before airing it; it is never aired
again on its own.

``eas_rwt_schedule`` is a single row (``id`` 1): the weekly test's day, local time and time
zone, location codes, station id and optional voice text, and ``last_slot_at``, the scheduled
instant (UTC) last aired or passed over, so a restart or a clock jump never airs a slot twice.

``eas_forward_rules`` is a single row (``id`` 1): the forwarding rule book as JSON
(:mod:`alertstation.eas.forward.rules`). No row means no rules and the default ``manual``.

``eas_pending`` holds every message a rule did not air at once: a CAP forward (``origin``
``forward``, its ``eas_forward_queue`` entry parked as ``awaiting``) or a received SAME message
(``relay``, its recording in ``audio_path``). ``state`` is ``waiting`` (``air_at`` set for a hold,
null for manual approval), ``held`` (an operator stopped the countdown), or a final state:
``forwarded``, ``rejected``, ``expired`` (its valid time ``expires_at`` passed first) or
``withdrawn`` (its CAP alert was cancelled, ended or left the area meanwhile).
"""

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

eas_forward_settings = Table(
    "eas_forward_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("enabled", Boolean, nullable=False),
    Column("station_id", String(8), nullable=False),
    Column("attention_seconds", Float, nullable=False),
    Column("nwr_tone", Boolean, nullable=False),
    Column("include_voice", Boolean, nullable=False),
    Column("max_age_minutes", Integer, nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime(), nullable=True),
)

eas_forward_airings = Table(
    "eas_forward_airings",
    metadata,
    Column(
        "queue_id",
        Integer,
        ForeignKey("eas_forward_queue.id", ondelete="CASCADE"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("claimed_at", UTCDateTime(), nullable=False),
    Column("claimed_by", String(128), nullable=False),
    Column("header", Text, nullable=True),
    Column("voice", String(16), nullable=False),  # spoken | none | unavailable
    Column("note", Text, nullable=False),
    Column(
        "message_id",
        Integer,
        ForeignKey("eas_archive.id", ondelete="SET NULL"),
        nullable=True,
    ),
    Column("aired_at", UTCDateTime(), nullable=True),
    Column("error", Text, nullable=True),
)

eas_rwt_schedule = Table(
    "eas_rwt_schedule",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("enabled", Boolean, nullable=False),
    Column("weekday", SmallInteger, nullable=False),  # 0 = Monday … 6 = Sunday
    Column("time_of_day", String(5), nullable=False),  # HH:MM in the station's time zone
    Column("location_codes", Text, nullable=False),  # PSSCCC codes joined by "-"
    Column("station_id", String(8), nullable=False),
    Column("voice_text", Text, nullable=False),  # "" = no voice
    Column("last_slot_at", UTCDateTime(), nullable=True),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime(), nullable=True),
)

eas_forward_rules = Table(
    "eas_forward_rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("book", Text, nullable=False),  # {"rules": [...], "default": {"mode": ...}}
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime(), nullable=True),
)

eas_pending = Table(
    "eas_pending",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("origin", String(16), nullable=False),  # forward | relay
    Column("source", String(32), nullable=False),  # poll:<id> | audio:<id> | imported | poll
    Column(
        "queue_id",
        Integer,
        ForeignKey("eas_forward_queue.id", ondelete="CASCADE"),
        nullable=True,
    ),
    Column(
        "received_id",
        Integer,
        ForeignKey("received_eas_messages.id", ondelete="CASCADE"),
        nullable=True,
    ),
    Column("header", Text, nullable=False),  # what the station will air (its own station id)
    Column("event_code", String(3), nullable=False),
    Column("audio_path", String(255), nullable=True),  # a received message's recording
    Column("rule", String(32), nullable=False),  # rule N | default
    Column("mode", String(8), nullable=False),  # manual | hold
    Column("hold_minutes", Integer, nullable=True),
    Column("state", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("air_at", UTCDateTime(), nullable=True),
    Column("expires_at", UTCDateTime(), nullable=False),
    Column("decided_by", String(64), nullable=True),
    Column("decided_at", UTCDateTime(), nullable=True),
    Index("ix_eas_pending_state", "state"),
)
