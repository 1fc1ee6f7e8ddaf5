"""Tables of the airing queue and of the airing outputs' settings.

``eas_airing_queue`` holds one row per message put on the air: the archived message it plays
(``eas_archive``; deleting the message removes its queue row), where it came from (``origin``:
manual, resend, forward, relay, rwt), whether the operator chose to archive it only, its
``state`` (``queued`` → ``airing`` → ``aired``, ``archived_only``, ``failed``, ``stopped``;
``removed`` when taken off the queue before airing, ``interrupted`` when the worker stopped while
it aired), when it was queued, started and finished, the error of a failed airing, and who asked
to stop it and when. One message airs at a time, oldest queued first.

``eas_airing_outputs`` holds one row per output an item played through (``archive``,
``icecast``, ``alsa``, ``relays``): when it started and ended, whether it was ok and its error.

``eas_airing_settings`` is a single row (``id`` 1) with the outputs' settings: the sample rate
messages are rendered at, the Icecast source client (host, port, mount, source user and
password, TLS) and the ALSA device. No row means the defaults of
``alertstation.eas.airing.settings``.
"""

from sqlalchemy import Boolean, Column, ForeignKey, Index, Integer, String, Table, Text, false

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

QUEUE_STATES = (
    "queued",
    "airing",
    "aired",
    "archived_only",
    "failed",
    "stopped",
    "removed",
    "interrupted",
)
ORIGINS = ("manual", "resend", "forward", "relay", "rwt")

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
    Column("state", String(16), nullable=False),
    Column("archive_only", Boolean, nullable=False, default=False, server_default=false()),
    Column("enqueued_at", UTCDateTime(), nullable=False),
    Column("started_at", UTCDateTime(), nullable=True),
    Column("finished_at", UTCDateTime(), nullable=True),
    Column("error", Text, nullable=True),
    Column("stop_requested_at", UTCDateTime(), nullable=True),
    Column("stop_requested_by", String(64), nullable=True),
)

Index("ix_eas_airing_queue_state", eas_airing_queue.c.state, eas_airing_queue.c.id)
Index("ix_eas_airing_queue_archive_id", eas_airing_queue.c.archive_id)

eas_airing_outputs = Table(
    "eas_airing_outputs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "queue_id",
        Integer,
        ForeignKey("eas_airing_queue.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("name", String(16), nullable=False),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("ended_at", UTCDateTime(), nullable=True),
    Column("ok", Boolean, nullable=True),  # null while it plays
    Column("error", Text, nullable=True),
)

Index("ix_eas_airing_outputs_queue_id", eas_airing_outputs.c.queue_id, eas_airing_outputs.c.id)

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

#: What the output-health check found for each enabled real output (``icecast``, ``alsa``):
#: the target it checked (``host:port`` or the ALSA device, never a credential), whether it was
#: reachable, why not, and when. One row per output, replaced by each check.
eas_output_health = Table(
    "eas_output_health",
    metadata,
    Column("name", String(16), primary_key=True, autoincrement=False),
    Column("target", String(300), nullable=False),
    Column("reachable", Boolean, nullable=False),
    Column("detail", Text, nullable=True),
    Column("checked_at", UTCDateTime(), nullable=False),
)
