"""Tables of the audio package.

``audio_sources`` holds one row per monitored source: what it is (``kind`` ``stream`` with a
``url``, or ``receiver`` with an argv ``command``), its ``device_params`` (JSON, never the
secrets), the stored credentials in their own columns (``auth_password``, ``auth_header``; no
response ever carries them), and the live status the monitor writes (``state``,
``error_message``, ``level_dbfs``, ``peak_dbfs`` (the highest block peak since the last write),
``icy_title``, ``last_audio_at``), so every web process shows the same picture
(``archive_error`` and ``archive_failures`` are the rolling archive's).
``restart_generation`` (bumped by one) is how a web process asks the monitor to restart a
source.
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
    false,
    true,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

NAME_WIDTH = 100
URL_WIDTH = 2048
SECRET_WIDTH = 1024
ERROR_WIDTH = 500
TITLE_WIDTH = 255
HEADER_WIDTH = 300

audio_sources = Table(
    "audio_sources",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME_WIDTH), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("url", String(URL_WIDTH), nullable=False),
    Column("command", Text, nullable=False, server_default="[]"),
    Column("device_params", Text, nullable=False, server_default="{}"),
    Column("auth_password", String(SECRET_WIDTH), nullable=True),
    Column("auth_header", String(SECRET_WIDTH), nullable=True),
    Column("enabled", Boolean, nullable=False, server_default=true()),
    Column("relay_enabled", Boolean, nullable=False, server_default=false()),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # Live status, written by the monitor in the worker leader.
    Column("state", String(16), nullable=False, server_default="stopped"),
    Column("error_message", String(ERROR_WIDTH), nullable=True),
    Column("level_dbfs", Float, nullable=True),
    Column("peak_dbfs", Float, nullable=True),
    Column("icy_title", String(TITLE_WIDTH), nullable=True),
    Column("last_audio_at", UTCDateTime, nullable=True),
    Column("state_changed_at", UTCDateTime, nullable=True),
    Column("restart_generation", Integer, nullable=False, server_default="0"),
    # The rolling archive's last failure (cleared by the next good segment) and failure count.
    Column("archive_error", String(ERROR_WIDTH), nullable=True),
    Column("archive_failures", Integer, nullable=False, server_default="0"),
)

# One row per audio alert the monitor opened: silence, clipping or source_down. It is "open"
# until resolved (an acknowledged alert is still open); ``ended_at`` is when the condition
# stopped, which the monitor writes; resolving is an operator's act.
audio_alerts = Table(
    "audio_alerts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "source_id", Integer, ForeignKey("audio_sources.id", ondelete="CASCADE"), nullable=False
    ),
    Column("kind", String(16), nullable=False),
    Column("detail", String(ERROR_WIDTH), nullable=True),
    Column("started_at", UTCDateTime, nullable=False),
    Column("ended_at", UTCDateTime, nullable=True),
    Column("acknowledged_by", String(64), nullable=True),
    Column("acknowledged_at", UTCDateTime, nullable=True),
    Column("resolved_by", String(64), nullable=True),
    Column("resolved_at", UTCDateTime, nullable=True),
    Index("ix_audio_alerts_resolved_at", "resolved_at"),
    Index("ix_audio_alerts_source_id", "source_id"),
)

# Every valid SAME header the monitor heard (two or three identical bursts), with the message
# audio from the end of the header to the EOM (at most two minutes) in ``audio_path`` (a WAV
# under ``<data dir>/received``). ``duplicate`` marks the same header heard again, from any
# source, within its purge time: stored, never relayed. ``relay`` says what relaying did.
received_eas_messages = Table(
    "received_eas_messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "source_id", Integer, ForeignKey("audio_sources.id", ondelete="SET NULL"), nullable=True
    ),
    Column("header", String(HEADER_WIDTH), nullable=False),
    Column("message_key", String(HEADER_WIDTH), nullable=False),
    Column("event_code", String(3), nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("bursts", Integer, nullable=False),
    Column("duplicate", Boolean, nullable=False, server_default=false()),
    Column("audio_path", String(255), nullable=True),
    Column("audio_seconds", Float, nullable=True),
    Column("relay", String(ERROR_WIDTH), nullable=True),
    Column("relay_message_id", Integer, nullable=True),
    Column("acknowledged_by", String(64), nullable=True),
    Column("acknowledged_at", UTCDateTime, nullable=True),
    Index("ix_received_eas_messages_message_key", "message_key"),
    Index("ix_received_eas_messages_received_at", "received_at"),
)

# Headers the monitor read exactly (two identical bursts) but refused under 47 CFR 11.31, with
# the rule each broke (a purge of +0000, an impossible issue time, ...): never acted on, listed
# on the received-messages page. The monitor keeps the newest ``REFUSED_KEEP`` rows.
received_eas_refused = Table(
    "received_eas_refused",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "source_id", Integer, ForeignKey("audio_sources.id", ondelete="SET NULL"), nullable=True
    ),
    Column("header", String(HEADER_WIDTH), nullable=False),
    Column("reason", String(ERROR_WIDTH), nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Index("ix_received_eas_refused_received_at", "received_at"),
)

# The audio monitoring settings: one row (id 1) of JSON (see ``alertstation.audio.settings``).
audio_settings = Table(
    "audio_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("data", Text, nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

__all__ = [
    "audio_alerts",
    "audio_settings",
    "audio_sources",
    "metadata",
    "received_eas_messages",
    "received_eas_refused",
]
