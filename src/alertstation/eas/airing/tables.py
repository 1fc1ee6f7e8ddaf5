"""Tables of the airing queue and of the airing outputs' settings.

``eas_airing_queue`` holds one row per message put on the air: the archived message it plays
(``eas_archive``; deleting the message removes its queue row), where it came from (``origin``:
manual, resend, forward, rwt), its ``state`` (``queued`` → ``airing`` → ``aired`` or
``failed``), when it was queued, started and finished, the error of a failed airing and the
per-output results as JSON text. One message airs at a time, oldest queued first.

``eas_airing_settings`` is a single row (``id`` 1) with the outputs' settings: the sample rate
messages are rendered at, the Icecast source client (host, port, mount, source user and
password, TLS) and the ALSA device. No row means the defaults of
``alertstation.eas.airing.settings``.
"""

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, String, Table, Text

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

QUEUE_STATES = ("queued", "airing", "aired", "failed")
ORIGINS = ("manual", "resend", "forward", "rwt")

eas_airing_queue = Table(
    "eas_airing_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "archive_id",
        Integer,
        ForeignKey("eas_archive.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("origin", String(16), nullable=False),
    Column("state", String(8), nullable=False),
    Column("enqueued_at", UTCDateTime(), nullable=False),
    Column("started_at", UTCDateTime(), nullable=True),
    Column("finished_at", UTCDateTime(), nullable=True),
    Column("error", Text, nullable=True),
    Column("outputs", Text, nullable=True),  # JSON: {"icecast": {"ok": false, "error": "…"}}
)

Index("ix_eas_airing_queue_state", eas_airing_queue.c.state, eas_airing_queue.c.id)
Index("ix_eas_airing_queue_archive_id", eas_airing_queue.c.archive_id)

eas_airing_settings = Table(
    "eas_airing_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("sample_rate", Integer, nullable=False),
    Column("icecast_enabled", Boolean, nullable=False),
    Column("icecast_host", String(255), nullable=False),
    Column("icecast_port", Integer, nullable=False),
    Column("icecast_mount", String(255), nullable=False),
    Column("icecast_username", String(64), nullable=False),
    Column("icecast_password", String(255), nullable=True),
    Column("icecast_tls", Boolean, nullable=False),
    Column("alsa_enabled", Boolean, nullable=False),
    Column("alsa_device", String(255), nullable=False),
    Column("updated_by", String(64), nullable=True),
    Column("updated_at", UTCDateTime(), nullable=True),
)
