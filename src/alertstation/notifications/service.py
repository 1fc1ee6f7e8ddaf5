"""Notifications: write one where there is news, manage channels, read the delivery log.

:func:`notify` is what every part of the station with news calls, inside its own transaction:
it writes a ``notifications`` row and one ``pending`` delivery per enabled channel subscribed
to the event. Nothing is sent here: the worker's delivery job (``notifications.delivery``)
sends pending deliveries later, in a thread of its own, so a slow channel never holds up the
caller (the airing loop among them).

A channel's apprise URL is a secret: :func:`channel_as_dict` shows only its scheme (``kind``)
and whether it is set, and audit rows name channels by id and name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, delete, func, insert, select, update

from alertstation.db.types import utcnow
from alertstation.errors import FieldError, Invalid, NameTaken, NotFound, raise_field_errors
from alertstation.notifications import events as ev
from alertstation.notifications.tables import (
    notification_channels,
    notification_deliveries,
    notifications,
)

MAX_SUBJECT: Final[int] = 200
MAX_BODY: Final[int] = 20_000
MAX_URL: Final[int] = 2000
MAX_NAME: Final[int] = 80
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]{0,31})://\S+$")
_C = notification_channels.c
_N = notifications.c
_D = notification_deliveries.c


def _subscribers(conn: Connection, event: str) -> list[Any]:
    rows = conn.execute(
        select(_C.id, _C.name, _C.events).where(_C.enabled.is_(True)).order_by(_C.id)
    ).all()
    return [row for row in rows if event in json.loads(row.events)]


def has_subscribers(conn: Connection, event: str) -> bool:
    """Tell whether any enabled channel subscribes to ``event`` (a batch asks once)."""
    return bool(_subscribers(conn, event))


def notify(
    conn: Connection,
    event: str,
    *,
    subject: str,
    body: str,
    now: datetime | None = None,
    audio_path: str | None = None,
    dedupe_key: str | None = None,
) -> int | None:
    """Write a notification of ``event`` in the caller's transaction; return its id.

    One pending delivery is written for each enabled channel subscribed to ``event``. None when
    no channel subscribes (nothing is written) or when a notification with the same
    ``dedupe_key`` exists already. ``audio_path`` is an audio file relative to the data
    directory (the aired message's WAV): email channels get it attached as MP3.
    """
    if event not in ev.EVENTS:
        raise ValueError(f"unknown notification event {event!r}; one of {', '.join(ev.EVENTS)}")
    channels = _subscribers(conn, event)
    if not channels:
        return None
    return _write(conn, event, channels, subject, body, now or utcnow(), audio_path, dedupe_key)


def _write(
    conn: Connection,
    event: str,
    channels: Iterable[Any],
    subject: str,
    body: str,
    now: datetime,
    audio_path: str | None,
    dedupe_key: str | None,
) -> int | None:
    if dedupe_key is not None:
        seen = conn.execute(select(_N.id).where(_N.dedupe_key == dedupe_key)).first()
        if seen is not None:
            return None
    notification_id = int(
        conn.execute(
            insert(notifications).values(
                event=event,
                subject=subject.strip()[:MAX_SUBJECT] or event,
                body=body[:MAX_BODY],
                audio_path=audio_path,
                dedupe_key=dedupe_key,
                created_at=now,
            )
        ).inserted_primary_key[0]
    )
    for channel in channels:
        conn.execute(
            insert(notification_deliveries).values(
                notification_id=notification_id,
                channel_id=channel.id,
                target=channel.name,
                state=ev.PENDING,
                attempts=0,
                created_at=now,
                next_attempt_at=now,
            )
        )
    return notification_id


def send_test(conn: Connection, channel_id: int, *, by: str, now: datetime) -> int:
    """Queue a test notification to one channel (enabled or not); return the delivery id."""
    channel = _channel_row(conn, channel_id)
    notification_id = _write(
        conn,
        ev.TEST,
        [channel],
        "Alert Station test notification",
        f"A test of the channel {channel.name!r}, asked for by {by}.",
        now,
        None,
        None,
    )
    return int(
        conn.execute(
            select(_D.id).where(_D.notification_id == notification_id).order_by(_D.id)
        ).scalar_one()
    )


# --- channels ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChannelInput:
    """A channel's fields as checked at the edge; None keeps the stored value (on edit)."""

    name: str | None
    url: str | None
    events: list[str] | None
    enabled: bool | None


def check_url(value: Any) -> str:
    """Return an apprise URL (``scheme://...``) or raise Invalid without echoing it."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_URL:
        raise Invalid(f"url: an apprise URL such as mailtos://… of at most {MAX_URL} characters",
                      field="url")  # fmt: skip
    if not _SCHEME.match(value.strip()):
        raise Invalid(
            "url: an apprise URL, scheme://… (mailto, mailtos, json, ntfy, slack, …)", field="url"
        )
    return value.strip()


def kind_of(url: str) -> str:
    """Return a channel URL's scheme (``mailtos``, ``json``): all a response shows of it."""
    found = _SCHEME.match(url)
    return found.group(1) if found else "unknown"


def check_channel(body: dict[str, Any], *, creating: bool) -> ChannelInput:
    """Check a channel body (``name``, ``url``, ``events``, ``enabled``).

    Creating needs a name and a URL. On edit a field left out keeps its value, and so does a
    blank URL (the stored secret is never sent back to be re-entered). Every bad field is
    reported at once: 422 with ``details.errors`` (``[{field, message}]``).
    """
    errors: list[FieldError] = []
    unknown = sorted(set(body) - {"name", "url", "events", "enabled"})
    if unknown:
        errors.append(FieldError(unknown[0], f"not a channel field: {', '.join(unknown)}"))
    name = body.get("name")
    if name is not None or creating:
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME:
            errors.append(FieldError("name", f"name: 1-{MAX_NAME} characters"))
            name = None
        else:
            name = name.strip()
    raw_url = body.get("url")
    url = None
    if raw_url not in (None, "") or creating:
        try:
            url = check_url(raw_url)
        except Invalid as ex:
            errors.append(FieldError("url", ex.message))
    events = body.get("events", [] if creating else None)
    if events is not None:
        if not isinstance(events, list) or any(e not in ev.EVENTS for e in events):
            errors.append(FieldError("events", f"events: a list of {', '.join(ev.EVENTS)}"))
            events = None
        else:
            events = list(dict.fromkeys(events))
    enabled = body.get("enabled", True if creating else None)
    if enabled is not None and not isinstance(enabled, bool):
        errors.append(FieldError("enabled", "enabled: true or false"))
    try:
        raise_field_errors(errors)
    except FieldError as ex:
        raise ex.as_app_error() from None
    return ChannelInput(name, url, events, enabled)


def _channel_row(conn: Connection, channel_id: int) -> Any:
    row = conn.execute(select(notification_channels).where(_C.id == channel_id)).first()
    if row is None:
        raise NotFound(f"no notification channel {channel_id}")
    return row


def _name_free(conn: Connection, name: str, but: int | None = None) -> None:
    query = select(_C.id).where(func.lower(_C.name) == name.lower())
    if but is not None:
        query = query.where(_C.id != but)
    if conn.execute(query).first() is not None:
        raise NameTaken("name", f"a channel named {name!r} exists")


def channel_as_dict(row: Any) -> dict[str, Any]:
    """A channel as JSON-ready data: never its URL, only its kind and that it is set."""
    return {
        "id": row.id,
        "name": row.name,
        "kind": kind_of(row.url),
        "url_set": bool(row.url),
        "events": json.loads(row.events),
        "enabled": bool(row.enabled),
        "updated_at": row.updated_at.isoformat(),
        "updated_by": row.updated_by,
    }


def list_channels(conn: Connection) -> list[dict[str, Any]]:
    """Every channel, by name."""
    rows = conn.execute(select(notification_channels).order_by(_C.name, _C.id)).all()
    return [channel_as_dict(row) for row in rows]


def create_channel(
    conn: Connection, data: ChannelInput, *, by: str | None, now: datetime
) -> dict[str, Any]:
    """Add a channel in the caller's transaction."""
    if data.url is None or data.name is None:
        raise Invalid("name and url: required", field="url" if data.name else "name")
    _name_free(conn, data.name)
    new_id = conn.execute(
        insert(notification_channels).values(
            name=data.name,
            url=data.url,
            events=json.dumps(data.events or []),
            enabled=data.enabled is not False,
            created_at=now,
            updated_at=now,
            updated_by=by,
        )
    ).inserted_primary_key[0]
    return channel_as_dict(_channel_row(conn, int(new_id)))


def update_channel(
    conn: Connection, channel_id: int, data: ChannelInput, *, by: str | None, now: datetime
) -> tuple[dict[str, Any], list[str]]:
    """Change a channel; return it and the names of the fields that changed (``url`` included
    when a new one was sent, never its value)."""
    old = _channel_row(conn, channel_id)
    values: dict[str, Any] = {}
    if data.name is not None:
        _name_free(conn, data.name, but=channel_id)
        values["name"] = data.name
    if data.events is not None:
        values["events"] = json.dumps(data.events)
    if data.enabled is not None:
        values["enabled"] = data.enabled
    if data.url is not None:
        values["url"] = data.url
    changed = sorted(name for name, value in values.items() if getattr(old, name) != value)
    conn.execute(
        update(notification_channels)
        .where(_C.id == channel_id)
        .values(**values, updated_at=now, updated_by=by)
    )
    return channel_as_dict(_channel_row(conn, channel_id)), changed


def delete_channel(conn: Connection, channel_id: int) -> dict[str, Any]:
    """Remove a channel (its past deliveries stay in the log); return what it was."""
    row = _channel_row(conn, channel_id)
    conn.execute(delete(notification_channels).where(_C.id == channel_id))
    return channel_as_dict(row)


# --- the delivery log ---------------------------------------------------------------------------


def delivery_as_dict(row: Any) -> dict[str, Any]:
    """One delivery as JSON-ready data (what was sent, where, and how it went)."""
    return {
        "id": row.id,
        "event": row.event if row.event is not None else f"{row.feed}_feed",
        "subject": row.subject,
        "target": row.target,
        "feed": row.feed,
        "state": row.state,
        "attempts": row.attempts,
        "created_at": row.created_at.isoformat(),
        "next_attempt_at": row.next_attempt_at.isoformat() if row.next_attempt_at else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "error": row.error,
    }


def delivery_log(conn: Connection, limit: int = 100) -> list[dict[str, Any]]:
    """The newest deliveries first, notifications and feeds together."""
    query = (
        select(
            _D.id,
            _D.target,
            _D.feed,
            _D.state,
            _D.attempts,
            _D.created_at,
            _D.next_attempt_at,
            _D.finished_at,
            _D.error,
            _N.event,
            _N.subject,
        )  # fmt: skip
        .select_from(notification_deliveries.outerjoin(notifications))
        .order_by(_D.id.desc())
        .limit(max(1, min(limit, 1000)))
    )
    return [delivery_as_dict(row) for row in conn.execute(query).all()]
