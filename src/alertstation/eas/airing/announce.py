"""What the end of an airing tells the world: notifications and the ENDEC feed.

Called by the airing loop in the transaction that records an item's result
(``queue.finish(on_end=...)``), so the news is written with the result or not at all and is sent
later by the worker's delivery job: nothing here waits on a channel.

* ``aired`` (``relayed`` for a relayed or forwarded message), ``stopped`` and ``failed`` become
  notifications of those events, the aired audio attached to email;
* an aired message, originated (manual, resend, weekly test) or forwarded (relay, CAP forward),
  is queued for the ENDEC feed as CAP 1.2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from sqlalchemy import Connection

from alertstation.eas import archive
from alertstation.eas.airing import queue as airing
from alertstation.notifications import events, feeds, notify

#: Origins whose message came from elsewhere: they are "relayed", the rest "aired".
FORWARDED_ORIGINS: Final[frozenset[str]] = frozenset({"relay", "forward"})
_EVENTS: Final[dict[str, str]] = {
    airing.AIRED: events.AIRED,
    airing.STOPPED: events.STOPPED,
    airing.FAILED: events.FAILED,
}


def announcer(data_dir: Path) -> Callable[[Connection, airing.QueueItem], None]:
    """Return the ``on_end`` of ``queue.finish`` for a station whose archive is in ``data_dir``."""

    def announce(conn: Connection, item: airing.QueueItem) -> None:
        announce_end(conn, item, data_dir)

    return announce


def announce_end(conn: Connection, item: airing.QueueItem, data_dir: Path) -> None:
    """Write the notification and the ENDEC feed message of an ended airing item."""
    event = _EVENTS.get(item.state)
    if event is None:  # archived only, interrupted, removed: no news for the channels
        return
    forwarded = item.origin in FORWARDED_ORIGINS
    if event == events.AIRED and forwarded:
        event = events.RELAYED
    when = item.finished_at or item.started_at or item.enqueued_at
    text = airing.plain_text(conn, item.header, near=when)
    try:
        audio: str | None = str(archive.wav_file(data_dir, item.wav_path))
    except ValueError:
        audio = None
    name = airing.event_name(item.header)
    lines = [text or item.header, f"Header: {item.header}", f"Origin: {item.origin}"]
    if item.aired_by:
        lines.append(f"By: {item.aired_by}")
    if item.error:
        lines.append(f"Error: {item.error}")
    lines += [
        f"{output['name']}: {'ok' if output.get('ok') else output.get('error') or 'failed'}"
        for output in item.outputs
    ]
    notify(
        conn,
        event,
        subject=f"{name} {event.replace('_', ' ')}",
        body="\n".join(lines),
        now=when,
        audio_path=audio if event in (events.AIRED, events.RELAYED) else None,
    )
    if item.state == airing.AIRED:
        feeds.queue_endec(
            conn,
            header=item.header,
            origin="forwarded" if forwarded else "originated",
            sent_at=item.started_at or when,
            text=text,
            audio_path=audio,
            message_id=item.archive_id,
        )
