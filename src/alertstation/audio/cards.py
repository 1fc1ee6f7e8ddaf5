"""What a source card shows beyond the stored source: clipping now, and the last header heard.

:func:`source_views` adds to each source's JSON form (``source_as_dict``):

``clipping``     a clipping alert of the source is going (not ended, not resolved);
``last_header``  the newest SAME header heard on the source (``header``, ``text`` in plain
                 language, ``received_at``), or None;
``base_url``     the API address of the source (``/api/radio/receivers/<id>`` for a receiver).

The page and ``GET /api/audio/sources`` answer the same views, so a card polled live shows what
the page rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, select

from alertstation.audio.sources import source_as_dict
from alertstation.audio.tables import audio_alerts, received_eas_messages
from alertstation.eas.plain import PlainLanguage

_A = audio_alerts.c
_R = received_eas_messages.c


def base_url(source_id: int, kind: str) -> str:
    """Return the API address of one source."""
    collection = "/api/radio/receivers" if kind == "receiver" else "/api/audio/sources"
    return f"{collection}/{source_id}"


def clipping_sources(conn: Connection) -> set[int]:
    """Return the ids of the sources whose clipping alert is going."""
    query = select(_A.source_id).where(
        _A.kind == "clipping", _A.ended_at.is_(None), _A.resolved_at.is_(None)
    )
    return set(conn.execute(query).scalars())


def last_header(conn: Connection, source_id: int, plain: PlainLanguage) -> dict[str, Any] | None:
    """Return the newest header heard on a source, with its plain-language text."""
    row = conn.execute(
        select(_R.header, _R.received_at)
        .where(_R.source_id == source_id)
        .order_by(_R.received_at.desc(), _R.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return {
        "header": row.header,
        "text": plain.text_or_none(row.header, near=row.received_at),
        "received_at": row.received_at.isoformat(),
    }


def source_views(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Return each source's JSON form with what its card shows (see the module)."""
    clipping = clipping_sources(conn)
    plain = PlainLanguage.for_connection(conn) if rows else None
    views = []
    for row in rows:
        view = source_as_dict(row)
        view["clipping"] = row.id in clipping
        view["last_header"] = last_header(conn, row.id, plain) if plain else None
        view["base_url"] = base_url(row.id, row.kind)
        views.append(view)
    return views
