"""The overview page's station summary, item by item, as an ENDEC's front panel shows it: what is
on the air, the forwarding mode and the rules that differ from it, the outputs' health, open
audio alerts, the last received messages and compliance alarms. Each function reads one item in
the caller's connection; nothing is written, and no credential is read.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select

from alertstation.audio import alerts as audio_alerts
from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.outputs.health import icecast_target, stored_health
from alertstation.eas.airing.queue import airing_snapshot
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.forward.rulebook import get_rule_book, rules_saved
from alertstation.eas.forward.rules import AUTO, HOLD, Mode
from alertstation.operations.compliance.alarms import ALARM_NAMES, open_alarms

#: Items shown of each list of the station summary (its page shows them all).
ITEMS_SHOWN = 3
RECEIVED_SHOWN = 5
#: A stored output check older than this is shown as stale (the worker checks every minute).
OUTPUT_CHECK_STALE = timedelta(minutes=5)
OUTPUT_NAMES = {"icecast": "Icecast stream", "alsa": "Sound card (ALSA)"}


def mode_words(mode: Mode) -> str:
    """Say a forwarding mode in words: "air at once", "wait for approval", "hold 5 minutes"."""
    if mode.mode == AUTO:
        return "air at once"
    if mode.mode == HOLD:
        minutes = mode.minutes or 0
        return f"hold {minutes} minute{'' if minutes == 1 else 's'}, then air"
    return "wait for an operator's approval"


def forwarding(conn: Connection) -> dict[str, Any]:
    """Return the default mode (and in words), the number of rules and how many differ."""
    book = get_rule_book(conn)
    return {
        "mode": book.default.mode,
        "words": mode_words(book.default),
        "rules": len(book.rules),
        "differing": sum(rule.mode != book.default for rule in book.rules),
        "saved": rules_saved(conn),
    }


def on_air(conn: Connection) -> dict[str, Any]:
    """Return whether an output plays a message, what airs, and how many messages are queued."""
    snapshot = airing_snapshot(conn)
    queued = conn.execute(
        select(func.count())
        .select_from(eas_airing_queue)
        .where(eas_airing_queue.c.state == "queued")
    ).scalar_one()
    return {"on_air": snapshot.on_air, "now_airing": snapshot.now_airing, "queued": int(queued)}


def output_health(conn: Connection, now: datetime) -> list[dict[str, Any]]:
    """Each real output: off, not checked yet, reachable or unreachable, with the last check.

    A result stored for another target (the settings changed since) is not shown as current;
    one older than :data:`OUTPUT_CHECK_STALE` is marked stale (the worker is not checking).
    """
    settings = airing_settings.load(conn)
    stored = stored_health(conn)
    rows = []
    for name, enabled, target in (
        ("icecast", settings.icecast_enabled, icecast_target(settings)),
        ("alsa", settings.alsa_enabled, settings.alsa_device),
    ):
        last = stored.get(name)
        if last is not None and last["target"] != target:
            last = None
        if not enabled:
            state = "off"
        elif last is None:
            state = "unchecked"
        else:
            state = "reachable" if last["reachable"] else "unreachable"
        rows.append(
            {
                "name": name,
                "label": OUTPUT_NAMES[name],
                "target": target,
                "state": state,
                "detail": last["detail"] if last and enabled else None,
                "checked_at": last["checked_at"] if last and enabled else None,
                "stale": bool(last and enabled and now - last["checked_at"] > OUTPUT_CHECK_STALE),
            }
        )
    return rows


def open_audio_alerts(conn: Connection) -> tuple[list[dict[str, Any]], int]:
    """Return the newest open audio alerts (kind, source, since when) and how many are open."""
    page = audio_alerts.list_alerts(conn, "open", limit=ITEMS_SHOWN)
    names = dict(conn.execute(select(audio_sources.c.id, audio_sources.c.name)).all())
    rows = [
        {
            "kind": row.kind.replace("_", " "),
            "source": names.get(row.source_id, f"source {row.source_id}"),
            "detail": row.detail,
            "started_at": row.started_at,
            "ongoing": row.ended_at is None,
            "acknowledged": row.acknowledged_at is not None,
        }
        for row in page.rows
    ]
    return rows, page.total


def recent_received(conn: Connection) -> list[dict[str, Any]]:
    """Return the newest received SAME messages with the name of the source that heard them."""
    r = received_eas_messages.c
    query = (
        select(r.id, r.header, r.received_at, r.duplicate, audio_sources.c.name.label("source"))
        .select_from(
            received_eas_messages.outerjoin(audio_sources, audio_sources.c.id == r.source_id)
        )
        .order_by(r.received_at.desc(), r.id.desc())
        .limit(RECEIVED_SHOWN)
    )
    return [dict(row._mapping) for row in conn.execute(query)]


def compliance_alarms(conn: Connection) -> list[dict[str, Any]]:
    """Return the open compliance alarms, each with its kind in words."""
    return [
        {**alarm, "name": ALARM_NAMES.get(alarm["kind"], alarm["kind"])}
        for alarm in open_alarms(conn)
    ]
