"""Tables of notifications: channels, the notifications written by whoever has news, deliveries.

``notification_channels`` holds one row per apprise channel: its name, its apprise URL (a
secret: it never leaves the server), the events it subscribes to (a JSON list of names from
``alertstation.notifications.events.EVENTS``), whether it is enabled and who last changed it.

``notifications`` holds one row per piece of news: its event, subject and body, the audio file
that goes with it (the aired message's WAV, relative to the data directory) and an optional
``dedupe_key`` that makes a second notification of the same thing a no-op (a certificate's
14-day warning is sent once).

``notification_deliveries`` is the delivery log: one row per notification and channel, and one
per decoder-monitor or ENDEC feed message (``feed`` names it; ``payload`` holds what is sent).
``state`` is ``pending`` → ``sent`` or ``failed``; ``attempts`` counts the tries and
``next_attempt_at`` is when the delivery job tries again.
"""

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    true,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

notification_channels = Table(
    "notification_channels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(80), nullable=False),
    Column("url", Text, nullable=False),
    Column("events", Text, nullable=False),
    Column("enabled", Boolean, nullable=False, default=True, server_default=true()),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("updated_by", String(64), nullable=True),
    UniqueConstraint("name", name="uq_notification_channels_name"),
)

notifications = Table(
    "notifications",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event", String(32), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("audio_path", Text, nullable=True),
    Column("dedupe_key", String(200), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("dedupe_key", name="uq_notifications_dedupe_key"),
)

Index("ix_notifications_created_at", notifications.c.created_at)

notification_deliveries = Table(
    "notification_deliveries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "notification_id",
        Integer,
        ForeignKey("notifications.id", ondelete="CASCADE"),
        nullable=True,
    ),
    # No foreign key: a removed channel's deliveries keep their id (the log names the target),
    # and an operator's backup, which leaves the channels out, restores without them.
    Column("channel_id", Integer, nullable=True),
    Column("feed", String(16), nullable=True),
    Column("payload", Text, nullable=True),
    Column("target", String(80), nullable=False),
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0, server_default="0"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("next_attempt_at", UTCDateTime(), nullable=True),
    Column("finished_at", UTCDateTime(), nullable=True),
    Column("error", Text, nullable=True),
)

Index(
    "ix_notification_deliveries_due",
    notification_deliveries.c.state,
    notification_deliveries.c.next_attempt_at,
)
Index("ix_notification_deliveries_created_at", notification_deliveries.c.created_at)
