"""Manual EAS: compose activations, render them, send them to the airing queue, purge them.

An activation is what an operator composed: originator, event, SAME location codes (PSSCCC),
purge time, the sending station's id and a voice (espeak-ng speech from text, or an uploaded
WAV kept at ``<data_dir>/eas-manual/voice-<id>.wav``). The header is built when the message is
rendered, so its issue time is the moment of the preview or the send. The station id comes from
the request (``station_id``, default ``ALRTSTN``); no setting holds it yet.

Audit rules (docs/eas-manual.md): a send goes through the one broadcast path
(``airing.broadcast.broadcast``), which writes ``eas.broadcast`` once the message is archived and
queued for airing and never fails because of it (a lost row is logged at critical level); a
purge writes ``alert.deleted`` first, in the same transaction, and aborts with 500 when that
write fails.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

import numpy as np
from sqlalchemy import Connection, select

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas import archive, voice
from alertstation.eas.airing import broadcast, outputs
from alertstation.eas.audio import render_message, write_wav
from alertstation.eas.tables import eas_activations
from alertstation.errors import Conflict, Invalid, NotFound, ServiceUnavailable
from alertstation.same import DEFAULT_STATION_ID, MAX_LOCATIONS, SameHeader

log = logging.getLogger("alertstation.eas")

SAMPLE_RATE: Final[int] = 22050  # preview and upload rate; sends use the airing sample rate
ATTENTION_SECONDS: Final[float] = 8.0
NO_ATTENTION_EVENTS: Final[frozenset[str]] = frozenset({"RWT"})  # weekly tests send no tone
DEFAULT_ORG: Final[str] = "EAS"
DEFAULT_PURGE: Final[str] = "0100"
VOICE_DIR: Final[str] = "eas-manual"
MAX_UPLOAD_BYTES: Final[int] = 16 * 1024 * 1024
_SEPARATORS = re.compile(r"[\s,;\-]+")
_PURGE = re.compile(r"^[0-9]{4}$")
# The SAME model names the bad field first ("purge time: …"); map that to the body field.
_FIELDS = {
    "originator": "org",
    "event": "event",
    "locations": "locations",
    "location code": "locations",
    "purge time": "purge",
    "station id": "station_id",
}


@dataclass(frozen=True)
class Composition:
    """A validated activation before it is stored."""

    org: str
    event: str
    locations: tuple[str, ...]
    purge: str
    station_id: str
    voice_text: str | None


def _text(body: dict[str, Any], name: str, default: str | None = None) -> str | None:
    value = body.get(name, default)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string", field=name)
    return value.strip() or default


def parse_locations(value: Any) -> tuple[str, ...]:
    """Return location codes from a list or from text split on spaces, commas or dashes."""
    if isinstance(value, list) and all(isinstance(code, str) for code in value):
        codes = [code.strip() for code in value if code.strip()]
    elif isinstance(value, str):
        codes = [code for code in _SEPARATORS.split(value) if code]
    else:
        raise Invalid("locations must be SAME PSSCCC codes (text or a list)", field="locations")
    if len(value) > 4000 or len(codes) > MAX_LOCATIONS:
        raise Invalid(f"locations: at most {MAX_LOCATIONS} codes", field="locations")
    return tuple(dict.fromkeys(codes))  # repeated codes are sent once


def _purge_delta(purge: str) -> timedelta:
    return timedelta(hours=int(purge[:2]), minutes=int(purge[2:]))


def compose(body: dict[str, Any], now: datetime) -> Composition:
    """Validate the fields of an activation with the SAME header model; 422 naming the field."""
    purge = _text(body, "purge", DEFAULT_PURGE) or DEFAULT_PURGE
    if not _PURGE.match(purge) or int(purge[2:]) > 59:
        raise Invalid("purge must be four digits HHMM, e.g. 0100", field="purge")
    voice_text = _text(body, "voice_text")
    if voice_text is not None and len(voice_text) > voice.MAX_TEXT_CHARS:
        raise Invalid(f"voice_text: at most {voice.MAX_TEXT_CHARS} characters", field="voice_text")
    composition = Composition(
        org=(_text(body, "org", DEFAULT_ORG) or DEFAULT_ORG).upper(),
        event=(_text(body, "event") or "").upper(),
        locations=parse_locations(body.get("locations", "")),
        purge=purge,
        station_id=_text(body, "station_id", DEFAULT_STATION_ID) or DEFAULT_STATION_ID,
        voice_text=voice_text,
    )
    header_for(composition, now)
    return composition


def header_for(composition: Composition | Any, now: datetime) -> SameHeader:
    """Build the header of a composition or activation row, issued at ``now``; 422 on error."""
    locations = composition.locations
    if isinstance(locations, str):
        locations = tuple(locations.split("-"))
    try:
        return SameHeader.build(
            composition.org,
            composition.event,
            tuple(locations),
            _purge_delta(composition.purge),
            composition.station_id,
            issued=now,
        )
    except ValueError as ex:
        message = str(ex)
        prefix = message.split(":", 1)[0]
        field = next((f for p, f in _FIELDS.items() if prefix.startswith(p)), "header")
        raise Invalid(message, field=field) from ex


def preview_header(activation: dict[str, Any], now: datetime) -> str | None:
    """Return the header text an activation (as listed) would air with if sent at ``now``."""
    try:
        return header_for(SimpleNamespace(**activation), now).encode()
    except Invalid:
        return None


def read_upload(data: bytes) -> np.ndarray:
    """Validate an uploaded voice WAV; return it as float samples at SAMPLE_RATE (422 if bad)."""
    try:
        return voice.from_wav(data, SAMPLE_RATE, max_bytes=MAX_UPLOAD_BYTES)
    except ValueError as ex:
        raise Invalid(f"audio: {ex}", field="audio") from ex


def voice_path(data_dir: Path, activation_id: int) -> Path:
    """Return where the uploaded voice of an activation is kept."""
    return data_dir / VOICE_DIR / f"voice-{activation_id}.wav"


def create_activation(
    station: Station, composition: Composition, audio: np.ndarray | None, actor: Actor
) -> dict[str, Any]:
    """Store a draft activation (and its uploaded voice) and return it."""
    with begin_write(station.engine) as conn:
        result = conn.execute(
            eas_activations.insert().values(
                event=composition.event,
                org=composition.org,
                locations="-".join(composition.locations),
                purge=composition.purge,
                station_id=composition.station_id,
                voice_text=composition.voice_text,
                has_audio=audio is not None,
                created_by=actor.username,
                created_at=station.clock(),
                state="draft",
            )
        )
        activation_id = int(result.inserted_primary_key[0])
        if audio is not None:
            path = voice_path(station.settings.data_dir, activation_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_wav(path, audio, SAMPLE_RATE)
        row = _get(conn, activation_id)
    log.info("manual EAS activation %s created by %s", activation_id, actor.username)
    return activation_as_dict(row)


def activation_as_dict(row: Any) -> dict[str, Any]:
    """Return an activation row as JSON-ready data."""
    return {
        "id": row.id,
        "org": row.org,
        "event": row.event,
        "locations": row.locations.split("-"),
        "purge": row.purge,
        "station_id": row.station_id,
        "voice_text": row.voice_text,
        "has_audio": row.has_audio,
        "created_by": row.created_by,
        "created_at": row.created_at.isoformat(),
        "state": row.state,
        "audio_url": f"/eas/manual/events/{row.id}/audio.wav",
    }


def _get(conn: Connection, activation_id: int) -> Any:
    return conn.execute(
        select(eas_activations).where(eas_activations.c.id == activation_id)
    ).first()


def get_activation(conn: Connection, activation_id: int) -> Any:
    """Return a live (not purged) activation row; 404 otherwise."""
    row = _get(conn, activation_id)
    if row is None or row.state == "deleted":
        raise NotFound(f"No manual EAS activation {activation_id}.")
    return row


def list_activations(conn: Connection, limit: int = 200) -> list[dict[str, Any]]:
    """Return live activations, newest first."""
    query = (
        select(eas_activations)
        .where(eas_activations.c.state != "deleted")
        .order_by(eas_activations.c.id.desc())
        .limit(limit)
    )
    return [activation_as_dict(row) for row in conn.execute(query)]


def render(
    station: Station, row: Any, now: datetime, *, sample_rate: int = SAMPLE_RATE
) -> archive.AiredMessage:
    """Render an activation's whole message, issued at ``now``; 503 when speech is unavailable.

    Previews use :data:`SAMPLE_RATE`; a send renders at the airing sample rate.
    """
    header = header_for(row, now)
    speech = None
    if row.has_audio:
        try:
            speech = voice_path(station.settings.data_dir, row.id).read_bytes()
        except OSError as ex:
            raise ServiceUnavailable(
                f"The uploaded voice of activation {row.id} is missing.", code="voice_missing"
            ) from ex
    elif row.voice_text:
        with station.engine.connect() as conn:
            speaker = voice.saved_voice(conn)
        try:
            speech = voice.speak(speaker, row.voice_text, sample_rate)
        except voice.SpeechUnavailable as ex:
            raise ServiceUnavailable(str(ex), code="speech_unavailable") from ex
        except ValueError as ex:
            raise Invalid(f"voice_text: {ex}", field="voice_text") from ex
    attention = 0.0 if row.event in NO_ATTENTION_EVENTS else ATTENTION_SECONDS
    samples = render_message(
        header, sample_rate=sample_rate, attention_seconds=attention, voice=speech
    )
    return archive.AiredMessage(header.encode(), samples, sample_rate)


def wav_bytes(message: archive.AiredMessage) -> bytes:
    """Return a rendered message as the bytes of a 16-bit mono WAV file."""
    return outputs.wav_bytes(message)


def send_activation(
    station: Station, activation_id: int, actor: Actor, *, archive_only: bool = False
) -> dict[str, Any]:
    """Render an activation at the airing rate, queue it for airing, then audit it.

    Returns the archive row with its ``queue`` block (see ``airing.broadcast``); the message
    waits its turn when another is on the air. 409 ``no_output`` when no real output is set up
    and ``archive_only`` was not chosen; 409 ``already_sent`` for a sent activation (its
    message is resent instead, naming when it first aired).
    """
    with station.engine.connect() as conn:
        row = get_activation(conn, activation_id)
    if row.state != "draft":
        raise Conflict(
            f"Activation {activation_id} was sent already; resend its message instead.",
            code="already_sent",
        )
    return broadcast.broadcast(
        station,
        origin="manual",
        render=lambda rate: render(station, row, station.clock(), sample_rate=rate),
        actor=actor,
        target=f"eas_activation:{activation_id}",
        aired_by=actor.username,
        activation_id=activation_id,
        archive_only=archive_only,
        operator=True,
    )


def confirmation(station: Station, activation_id: int) -> dict[str, Any]:
    """Return what the send confirmation of an activation names (see ``broadcast``), with its
    length as rendered now and, for a sent activation, when it first aired."""
    with station.engine.connect() as conn:
        row = get_activation(conn, activation_id)
        sent = conn.execute(
            select(archive.eas_archive.c.id)
            .where(archive.eas_archive.c.activation_id == activation_id)
            .order_by(archive.eas_archive.c.id)
            .limit(1)
        ).scalar()
        first = broadcast.first_aired(conn, sent) if sent is not None else None
    message = render(station, row, station.clock())
    summary = broadcast.confirmation(
        station, message.header, message.duration, first_aired_at=first
    )
    summary["state"] = row.state
    summary["message_id"] = sent
    return summary


def purge_activations(station: Station, ids: list[int] | None, actor: Actor) -> list[int]:
    """Purge the given live activations (all when ``ids`` is None), audit first; return ids."""
    with begin_write(station.engine) as conn:
        query = select(eas_activations.c.id, eas_activations.c.has_audio).where(
            eas_activations.c.state != "deleted"
        )
        if ids is not None:
            query = query.where(eas_activations.c.id.in_(ids))
        rows = conn.execute(query.order_by(eas_activations.c.id)).all()
        if not rows:
            return []
        purged = [row.id for row in rows]
        archive.record_deletion(
            station, conn, actor, "eas_activations", {"ids": purged, "count": len(purged)}
        )
        conn.execute(
            eas_activations.update()
            .where(eas_activations.c.id.in_(purged))
            .values(state="deleted", has_audio=False)
        )
    for row in rows:
        if row.has_audio:
            voice_path(station.settings.data_dir, row.id).unlink(missing_ok=True)
    log.warning("manual EAS activations purged by %s: %s", actor.username, purged)
    return purged
