"""The aired-message archive: files, rows, resend, delete and purge.

Every message the station airs is kept: the WAV file and a JSON sidecar (header, who, when) in
``<data_dir>/eas-archive/``, and a row in ``eas_archive``. Messages reach the archive through
:func:`alertstation.eas.airing.broadcast.broadcast`, which also queues them for airing;
``aired_at`` is when the message was sent to the queue, the queue item (``eas_airing_queue``)
says when it actually aired and through which outputs. Deleting an archived message also
removes its queue item, so a message still waiting in the queue is taken off it.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
from sqlalchemy import Connection, select

from alertstation.audit.actor import Actor
from alertstation.audit.ledger import ALERT_DELETED, NOTHING_DELETED
from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.eas.airing import queue as airing
from alertstation.eas.audio import write_wav
from alertstation.eas.plain import PlainLanguage
from alertstation.eas.tables import eas_archive

log = logging.getLogger("alertstation.eas")

ARCHIVE_DIR = "eas-archive"


@dataclass(frozen=True)
class AiredMessage:
    """A message about to be archived: its header text, PCM samples and rate."""

    header: str
    samples: npt.NDArray[np.int16]
    sample_rate: int

    @property
    def duration(self) -> float:
        """Return the length in seconds."""
        return round(self.samples.size / self.sample_rate, 3)


def archive_dir(data_dir: Path) -> Path:
    """Return (creating it) the folder that holds archived messages."""
    folder = data_dir / ARCHIVE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _file_stem(header: str, when: datetime) -> str:
    event = header.split("-")[2] if header.count("-") > 2 else "MSG"
    event = "".join(c for c in event if c.isalnum())[:3] or "MSG"
    return f"{when.strftime('%Y%m%dT%H%M%SZ')}-{event}-{secrets.token_hex(4)}"


def write_files(
    data_dir: Path, message: AiredMessage, *, aired_by: str | None, aired_at: datetime
) -> str:
    """Write the WAV and its JSON sidecar; return the WAV's name inside the archive folder."""
    folder = archive_dir(data_dir)
    stem = _file_stem(message.header, aired_at)
    write_wav(folder / f"{stem}.wav", message.samples, message.sample_rate)
    _write_sidecar(folder / f"{stem}.json", message.header, aired_by, aired_at)
    return f"{stem}.wav"


def _write_sidecar(path: Path, header: str, aired_by: str | None, aired_at: datetime) -> None:
    sidecar = {"header": header, "aired_by": aired_by, "aired_at": aired_at.isoformat()}
    path.write_bytes(orjson.dumps(sidecar, option=orjson.OPT_INDENT_2))


def insert_row(
    conn: Connection,
    *,
    header: str,
    wav_name: str,
    sample_rate: int,
    duration: float,
    activation_id: int | None,
    aired_by: str | None,
    aired_at: datetime,
) -> int:
    """Insert the archive row of an aired message and return its id."""
    result = conn.execute(
        eas_archive.insert().values(
            activation_id=activation_id,
            header=header,
            wav_path=wav_name,
            sample_rate=sample_rate,
            duration=duration,
            aired_by=aired_by,
            aired_at=aired_at,
        )
    )
    return int(result.inserted_primary_key[0])


def set_duration(conn: Connection, message_id: int, duration: float) -> None:
    """Record the length of a message archived as it aired (a live relay)."""
    conn.execute(
        eas_archive.update()
        .where(eas_archive.c.id == message_id)
        .values(duration=round(duration, 3))
    )


def wav_file(data_dir: Path, wav_name: str) -> Path:
    """Return the path of an archived WAV; ValueError when the name leaves the folder."""
    folder = (data_dir / ARCHIVE_DIR).resolve()
    path = (folder / wav_name).resolve()
    if not path.is_relative_to(folder) or path.parent != folder:
        raise ValueError(f"archive file name {wav_name!r} is not inside {folder}")
    return path


def remove_files(data_dir: Path, wav_names: list[str]) -> None:
    """Delete archived WAVs and their sidecars; a missing or foreign file is only logged."""
    for name in wav_names:
        try:
            path = wav_file(data_dir, name)
        except ValueError:
            log.warning("not removing archive file outside the archive: %s", name)
            continue
        path.unlink(missing_ok=True)
        path.with_suffix(".json").unlink(missing_ok=True)


def row_as_dict(row: Any) -> dict[str, Any]:
    """Return an archive row as JSON-ready data."""
    return {
        "id": row.id,
        "activation_id": row.activation_id,
        "header": row.header,
        "wav": row.wav_path,
        "sample_rate": row.sample_rate,
        "duration": row.duration,
        "aired_by": row.aired_by,
        "aired_at": row.aired_at.isoformat(),
        "audio_url": f"/messages/{row.id}/audio.wav",
    }


def list_rows(conn: Connection, limit: int = 200) -> list[dict[str, Any]]:
    """Return the newest archive rows first, each with its airing's ``state`` and times."""
    query = select(eas_archive).order_by(eas_archive.c.aired_at.desc(), eas_archive.c.id.desc())
    rows = [row_as_dict(row) for row in conn.execute(query.limit(limit))]
    states = airing.states_of_messages(conn, [row["id"] for row in rows])
    plain = PlainLanguage.for_connection(conn)
    for row in rows:
        found = states.get(row["id"], {})
        row["state"] = found.get("state")
        row["text"] = plain.text_or_none(
            row["header"], near=datetime.fromisoformat(row["aired_at"])
        )
        row["queue_id"] = found.get("queue_id")
        row["started_at"] = found.get("started_at")
        row["finished_at"] = found.get("finished_at")
    return rows


def get_row(conn: Connection, message_id: int) -> Any:
    """Return one archive row, or None."""
    return conn.execute(select(eas_archive).where(eas_archive.c.id == message_id)).first()


# --- auditing -------------------------------------------------------------------------------


def record_deletion(
    station: Station, conn: Connection, actor: Actor, target: str, details: dict[str, Any]
) -> None:
    """Write ``alert.deleted`` before a deletion; 500 (and a rollback) when it fails."""
    station.ledger.record_or_refuse(
        conn, actor, ALERT_DELETED, target=target, details=details, refusal=NOTHING_DELETED
    )


# --- message management (delete, purge; resend is in airing.broadcast) ---------------------------


def delete_messages(station: Station, ids: list[int] | None, actor: Actor) -> list[int]:
    """Delete archived messages (all when ``ids`` is None), audit first; return the ids."""
    with begin_write(station.engine) as conn:
        query = select(eas_archive.c.id, eas_archive.c.wav_path)
        if ids is not None:
            query = query.where(eas_archive.c.id.in_(ids))
        rows = conn.execute(query.order_by(eas_archive.c.id)).all()
        if not rows:
            return []
        deleted = [row.id for row in rows]
        record_deletion(
            station, conn, actor, "eas_archive", {"ids": deleted, "count": len(deleted)}
        )
        conn.execute(eas_archive.delete().where(eas_archive.c.id.in_(deleted)))
        bump_generation(conn, airing.GENERATION)  # queue items went with them (ON DELETE CASCADE)
    station.airing.changed()
    remove_files(station.settings.data_dir, [row.wav_path for row in rows])
    log.warning("archived EAS messages deleted by %s: %s", actor.username, deleted)
    return deleted
