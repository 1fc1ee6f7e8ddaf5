"""Write one station-log entry inside the caller's transaction: the one way into ``eas_log``.

Whatever records an event (a received header, an airing's end, an approval-queue decision)
calls :func:`record_entry` with the connection of the write transaction that records the event
itself, so the entry and the event are committed, or rolled back, together.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import orjson
from sqlalchemy import Connection

from alertstation.eas.log.tables import eas_log
from alertstation.eas.plain import PlainLanguage

RECEIVED: Final[str] = "received"
REFUSED: Final[str] = "refused"
RELAYED: Final[str] = "relayed"
FORWARDED: Final[str] = "forwarded"
ORIGINATED: Final[str] = "originated"
TEST_RECEIVED: Final[str] = "test_received"
TEST_SENT: Final[str] = "test_sent"
STOPPED: Final[str] = "stopped"
REMOVED: Final[str] = "removed"
HELD: Final[str] = "held"
REJECTED: Final[str] = "rejected"
APPROVED: Final[str] = "approved"
EXPIRED: Final[str] = "expired"
NOTE: Final[str] = "note"
CORRECTION: Final[str] = "correction"
REVIEW: Final[str] = "review"

#: Every kind of entry, in the order the page's filter lists them.
KINDS: Final[tuple[str, ...]] = (
    RECEIVED,
    REFUSED,
    RELAYED,
    FORWARDED,
    ORIGINATED,
    TEST_RECEIVED,
    TEST_SENT,
    STOPPED,
    REMOVED,
    HELD,
    REJECTED,
    APPROVED,
    EXPIRED,
    NOTE,
    CORRECTION,
    REVIEW,
)
#: The weekly and monthly tests (and the national periodic test): received or sent as tests.
TEST_EVENTS: Final[frozenset[str]] = frozenset({"RWT", "RMT", "NPT"})

SOURCE_WIDTH: Final[int] = 64
BY_WIDTH: Final[int] = 64
RESULT_WIDTH: Final[int] = 32


def _event_code(header: str | None) -> str | None:
    parts = (header or "").split("-")
    code = parts[2] if len(parts) > 2 and parts[0] == "ZCZC" else ""
    return code[:3] if len(code) == 3 and code.isalnum() else None


def airing_kind(origin: str, header: str | None) -> str:
    """Return the kind of entry an airing's end makes: ``relayed`` (a received message),
    ``forwarded`` (a CAP alert), ``test_sent`` (the weekly-test schedule's, or the station's
    own RWT, RMT or NPT) or ``originated`` (any other message the station sent)."""
    if origin == "relay":
        return RELAYED
    if origin == "forward":
        return FORWARDED
    if origin == "rwt":
        return TEST_SENT
    return TEST_SENT if _event_code(header) in TEST_EVENTS else ORIGINATED


def received_kind(header: str | None) -> str:
    """Return ``test_received`` for a received RWT, RMT or NPT, else ``received``."""
    return TEST_RECEIVED if _event_code(header) in TEST_EVENTS else RECEIVED


def record_entry(
    conn: Connection,
    kind: str,
    *,
    at: datetime,
    source: str | None = None,
    header: str | None = None,
    text: str | None = None,
    result: str | None = None,
    by: str | None = None,
    details: Mapping[str, Any] | None = None,
    corrects: int | None = None,
) -> int:
    """Add one entry to the station log in the caller's transaction; return its id.

    ``kind`` is one of :data:`KINDS`; ``at`` is when the event happened (aware, UTC stored).
    ``source`` says where it came from (``audio:<id>``, ``poll:<id>``, ``station``,
    ``operator``); ``header`` is the SAME header, whose plain-language text is stored now
    (in the station's time zone of this moment) unless ``text`` is given; ``result`` is the
    outcome (``aired``, ``failed``, ``duplicate``...); ``by`` who acted; ``details`` any
    JSON-ready facts (bursts, reason, per-output results); ``corrects`` the id of the entry a
    ``correction`` corrects. A ValueError names a bad kind or a correction without its entry.
    """
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    if (kind == CORRECTION) != (corrects is not None):
        raise ValueError("corrects: a correction, and only a correction, names the entry")
    if at.tzinfo is None:
        raise ValueError("at: a moment with its time zone is needed")
    if text is None and header:
        text = PlainLanguage.for_connection(conn).text_or_none(header, near=at)
    payload = orjson.dumps(dict(details or {}), default=str, option=orjson.OPT_SORT_KEYS)
    inserted = conn.execute(
        eas_log.insert().values(
            kind=kind,
            at=at,
            source=source[:SOURCE_WIDTH] if source else None,
            event_code=_event_code(header),
            header=header,
            text=text,
            result=result[:RESULT_WIDTH] if result else None,
            by=by[:BY_WIDTH] if by else None,
            details=payload.decode(),
            corrects_id=corrects,
        )
    )
    return int(inserted.inserted_primary_key[0])
