"""Tables of the CAP alert store: alerts, geocode ids, references, VTEC rows, settings, queue.

``cap_alerts`` holds one row per (sender, identifier), the idempotency key. Geocodes are kept
as integer ids (``alertstation.alerts.matching.encode_code``) so the whole store can be
re-matched against new settings without reading a string. ``cap_alert_refs`` keeps what each
message references (even when the referenced message has not arrived yet) and
``cap_alert_vtec`` the VTEC event keys that tie a message into its events.
"""

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from alertstation.db.metadata import metadata
from alertstation.db.types import UTCDateTime

cap_alerts = Table(
    "cap_alerts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sender", String(255), nullable=False),
    Column("identifier", String(255), nullable=False),
    Column("sent", UTCDateTime, nullable=False),
    Column("source", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("msg_type", String(16), nullable=False),
    # The text of the primary info block; null when the message has none (a Cancel may not).
    Column("event", Text, nullable=True),
    Column("event_code", Text, nullable=True),
    Column("severity", Text, nullable=True),
    Column("urgency", Text, nullable=True),
    Column("certainty", Text, nullable=True),
    Column("headline", Text, nullable=True),
    Column("area_desc", Text, nullable=True),
    Column("effective", UTCDateTime, nullable=True),
    Column("onset", UTCDateTime, nullable=True),
    Column("expires", UTCDateTime, nullable=True),
    Column("ends", UTCDateTime, nullable=True),
    # active | expired | cancelled | superseded (docs/alerts-lifecycle.md)
    Column("state", String(16), nullable=False),
    Column("cancelled_at", UTCDateTime, nullable=True),
    Column("in_area", Boolean, nullable=False, server_default=false()),
    Column("stored_area", Boolean, nullable=False, server_default=false()),
    # Why the alert matched the broadcast area: by one of its codes, by a polygon or circle
    # touching the station boundary, or both (docs/matching.md, "Geometry").
    Column("match_code", Boolean, nullable=False, server_default=false()),
    Column("match_geometry", Boolean, nullable=False, server_default=false()),
    Column("explicit", Boolean, nullable=False, server_default=false()),
    # The poll source whose fetch stored it (null: imported from a file or the command line).
    Column("poll_source_id", Integer, nullable=True),
    Column("raw", Text, nullable=False),
    # verified | unsigned | failed, with the reason (docs/alerts-parsing.md, "Signatures")
    Column("signature_status", String(16), nullable=False, server_default="unsigned"),
    Column("signature_reason", Text, nullable=False, server_default="no signature check recorded"),
    Column("received_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("sender", "identifier"),
)
Index("ix_cap_alerts_state", cap_alerts.c.state)

# One row per distinct valid geocode id of an alert (SAME and UGC together), with its place in
# the document (SAME codes first, then UGC, each in document order) and whether it is still in
# force: ``state`` active, or how it ended (superseded | cancelled | expired), when and by
# which message (docs/alerts-lifecycle.md, "Per-code state").
cap_alert_geocodes = Table(
    "cap_alert_geocodes",
    metadata,
    Column("alert_id", Integer, ForeignKey("cap_alerts.id", ondelete="CASCADE"), nullable=False),
    Column("code_id", Integer, nullable=False),
    Column("position", SmallInteger, nullable=False, server_default="0"),
    Column("state", String(16), nullable=False, server_default="active"),
    Column("ended_at", UTCDateTime, nullable=True),
    Column("ended_by", Integer, nullable=True),
    PrimaryKeyConstraint("alert_id", "code_id"),
)

# One row per CAP reference (sender, identifier, sent) a message carries.
cap_alert_refs = Table(
    "cap_alert_refs",
    metadata,
    Column("alert_id", Integer, ForeignKey("cap_alerts.id", ondelete="CASCADE"), nullable=False),
    Column("ref_sender", String(255), nullable=False),
    Column("ref_identifier", String(255), nullable=False),
    Column("ref_sent", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("alert_id", "ref_sender", "ref_identifier"),
)
Index("ix_cap_alert_refs_ref_identifier", cap_alert_refs.c.ref_identifier)

# One row per P-VTEC string of a message; the first five key columns name the chain.
cap_alert_vtec = Table(
    "cap_alert_vtec",
    metadata,
    Column("alert_id", Integer, ForeignKey("cap_alerts.id", ondelete="CASCADE"), nullable=False),
    Column("position", SmallInteger, nullable=False),
    Column("product_class", String(1), nullable=False),
    Column("action", String(3), nullable=False),
    Column("office", String(4), nullable=False),
    Column("phenomenon", String(2), nullable=False),
    Column("significance", String(1), nullable=False),
    Column("etn", Integer, nullable=False),
    Column("year", SmallInteger, nullable=False),
    Column("begin", UTCDateTime, nullable=True),
    Column("end", UTCDateTime, nullable=True),
    Column("chain_terminal", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("alert_id", "position"),
)
Index(
    "ix_cap_alert_vtec_chain",
    cap_alert_vtec.c.office,
    cap_alert_vtec.c.phenomenon,
    cap_alert_vtec.c.significance,
    cap_alert_vtec.c.etn,
    cap_alert_vtec.c.year,
)

# Key/value settings of the alert store; values are JSON text.
alert_settings = Table(
    "alert_settings",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Alerts waiting to be aired by the EAS side: pending | taken | skipped.
eas_forward_queue = Table(
    "eas_forward_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("alert_id", Integer, ForeignKey("cap_alerts.id", ondelete="CASCADE"), nullable=False),
    Column("event_code", String(8), nullable=False),
    Column("queued_at", UTCDateTime, nullable=False),
    Column("state", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    UniqueConstraint("alert_id"),
)

# The station boundary's table lives in its own package; importing it here puts it on the shared
# metadata wherever the alert tables are.
from alertstation.alerts.boundary.tables import station_boundary  # noqa: E402, F401
