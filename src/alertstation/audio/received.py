"""Received SAME messages as the operator sees them: decoded, acted on, and the refused ones.

* :func:`received_view` gives each message's decoded fields, duplicate status, relay note,
  approval-queue item and acknowledgement;
* :func:`forward` airs a received message on an operator's word, through the approval queue
  when it waits there (the rules put it there), else as the station relays it; never a
  duplicate, never twice;
* :func:`acknowledge` records that an operator saw it; a message waiting for approval is
  rejected with it, so it never airs;
* :func:`store_refused` keeps a header that was read exactly but refused under 47 CFR 11.31,
  with the rule it broke, and :func:`list_refused` lists them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, delete, insert, select, update

from alertstation.audio.tables import ERROR_WIDTH, HEADER_WIDTH
from alertstation.audio.tables import received_eas_messages as received
from alertstation.audio.tables import received_eas_refused as refused
from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas.forward import pending
from alertstation.eas.forward.config import get_forward_settings
from alertstation.eas.forward.relay import air_received, own_header, recorded_audio
from alertstation.eas.log import record_entry
from alertstation.eas.log.record import REFUSED
from alertstation.eas.plain import PlainLanguage
from alertstation.errors import Conflict, NotFound
from alertstation.same import SameHeader

#: Refused headers kept (the newest); a noisy source cannot fill the database.
REFUSED_KEEP: Final[int] = 500
ACK_ACTION: Final[str] = "eas.received.acknowledge"
FORWARD_ACTION: Final[str] = "eas.received.forward"

_R = received.c
_F = refused.c


def decoded_fields(text: str) -> dict[str, Any] | None:
    """Return a header's decoded fields (originator, event, codes, purge, issue, station)."""
    try:
        header = SameHeader.parse(text)
    except ValueError:
        return None
    day, hour, minute = header.issued
    return {
        "originator": header.org,
        "originator_name": header.org_name,
        "event": header.event,
        "event_name": header.event_name,
        "locations": list(header.locations),
        "purge": header.purge_code,
        "purge_minutes": int(header.purge.total_seconds() // 60),
        "issued": f"day {day}, {hour:02d}:{minute:02d} UTC",
        "station": header.station_id,
    }


def received_view(conn: Connection, rows: list[Any]) -> list[dict[str, Any]]:
    """Return received rows with decoded fields, duplicate status and approval-queue item."""
    items = pending.state_of_received(conn, [row.id for row in rows])
    plain = PlainLanguage.for_connection(conn)
    return [
        {
            "id": row.id,
            "source_id": row.source_id,
            "header": row.header,
            "text": plain.text_or_none(row.header, near=row.received_at),
            "event_code": row.event_code,
            "received_at": row.received_at.isoformat(),
            "bursts": row.bursts,
            "duplicate": bool(row.duplicate),
            "audio_seconds": row.audio_seconds,
            "audio_url": f"/api/eas/received/{row.id}/audio" if row.audio_path else None,
            "relay": row.relay,
            "relay_message_id": row.relay_message_id,
            "decoded": decoded_fields(row.header),
            "pending": items.get(row.id),
            "forwardable": forwardable(row, items.get(row.id)),
            "acknowledged_by": row.acknowledged_by,
            "acknowledged_at": row.acknowledged_at.isoformat() if row.acknowledged_at else None,
        }
        for row in rows
    ]


def _row(conn: Connection, message_id: int) -> Any:
    row = conn.execute(select(received).where(_R.id == message_id)).first()
    if row is None:
        raise NotFound(f"no received message {message_id}")
    return row


def _open_item(conn: Connection, message_id: int) -> dict[str, Any] | None:
    item = pending.state_of_received(conn, [message_id]).get(message_id)
    return item if item and item["state"] in pending.OPEN_STATES else None


def forwardable(row: Any, item: dict[str, Any] | None) -> bool:
    """Tell whether an operator may still forward a received message."""
    if item is not None:
        return item["state"] in pending.OPEN_STATES
    return not row.duplicate and row.relay_message_id is None


def forward(station: Station, message_id: int, actor: Actor) -> dict[str, Any]:
    """Air a received message on an operator's word; 409 when duplicate or already decided."""
    with station.engine.connect() as conn:
        row = _row(conn, message_id)
        item = pending.state_of_received(conn, [message_id]).get(message_id)
        settings = get_forward_settings(conn)
    if item is not None and item["state"] in pending.OPEN_STATES:
        return {"pending": pending.act(station, item["id"], "forward", actor)}
    if item is not None:
        raise Conflict(
            f"received message {message_id} was already {item['state']} on the approval queue",
            code="already_decided",
        )
    if row.duplicate:
        raise Conflict(f"received message {message_id} is a duplicate", code="duplicate")
    with begin_write(station.engine) as conn:
        claimed = conn.execute(
            update(received)
            .where(
                _R.id == message_id,
                _R.relay_message_id.is_(None),
                _R.relay.is_(None) | ~_R.relay.like("forwarding by %"),
            )
            .values(relay=f"forwarding by {actor.username}")
        ).rowcount
    if not claimed:
        raise Conflict(f"received message {message_id} was already aired", code="already_aired")
    own = own_header(SameHeader.parse(row.header), settings)
    try:
        aired_id = air_received(
            station,
            own,
            recorded_audio(station.settings.data_dir, row.audio_path),
            pending.station_rate(station),
            settings,
            actor=actor,
            target=f"received_eas_message:{message_id}",
            details={"received_header": row.header, "source_id": row.source_id},
        )
    except Exception as ex:
        with begin_write(station.engine) as conn:
            conn.execute(
                update(received)
                .where(_R.id == message_id)
                .values(relay=f"forward by {actor.username} failed: {ex}"[:ERROR_WIDTH])
            )
        raise
    with begin_write(station.engine) as conn:
        conn.execute(
            update(received)
            .where(_R.id == message_id)
            .values(
                relay=f"forwarded by {actor.username} as {own.encode()}",
                relay_message_id=aired_id,
            )
        )
    return {"message_id": aired_id, "header": own.encode()}


def acknowledge(station: Station, message_id: int, actor: Actor) -> dict[str, Any]:
    """Record an operator's acknowledgement (audited); a waiting message is rejected with it."""
    with station.engine.connect() as conn:
        _row(conn, message_id)
        item = _open_item(conn, message_id)
    rejected = pending.act(station, item["id"], "reject", actor) if item else None
    with begin_write(station.engine) as conn:
        now = station.clock()
        conn.execute(
            update(received)
            .where(_R.id == message_id, _R.acknowledged_at.is_(None))
            .values(acknowledged_by=actor.username, acknowledged_at=now)
        )
        station.ledger.record(
            conn,
            actor,
            ACK_ACTION,
            target=f"received_eas_message:{message_id}",
            details={"rejected_pending": rejected["id"] if rejected else None},
            propagate=True,
        )
        row = _row(conn, message_id)
    return {
        "id": message_id,
        "acknowledged_by": row.acknowledged_by,
        "acknowledged_at": row.acknowledged_at.isoformat(),
        "pending": rejected,
    }


def store_refused(conn: Connection, source_id: int, header: str, reason: str, now: datetime) -> int:
    """Keep one refused header with its reason; the oldest beyond ``REFUSED_KEEP`` go.

    The station log gets a ``refused`` entry in the same transaction (kept two years, unlike
    this list)."""
    new_id = int(
        conn.execute(
            insert(refused).values(
                source_id=source_id,
                header=header[:HEADER_WIDTH],
                reason=reason[:ERROR_WIDTH],
                received_at=now,
            )
        ).inserted_primary_key[0]
    )
    record_entry(
        conn,
        REFUSED,
        at=now,
        source=f"audio:{source_id}",
        header=header[:HEADER_WIDTH],
        result=REFUSED,
        details={"reason": reason[:ERROR_WIDTH], "refused_id": new_id},
    )
    if new_id > REFUSED_KEEP:
        conn.execute(delete(refused).where(_F.id <= new_id - REFUSED_KEEP))
    return new_id


def list_refused(conn: Connection, limit: int = 50) -> list[dict[str, Any]]:
    """Return the newest refused headers with the rule each broke."""
    rows = conn.execute(select(refused).order_by(_F.id.desc()).limit(limit)).all()
    return [
        {
            "id": row.id,
            "source_id": row.source_id,
            "header": row.header,
            "reason": row.reason,
            "received_at": row.received_at.isoformat(),
        }
        for row in rows
    ]
