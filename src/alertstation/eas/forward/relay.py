"""Air a received SAME message as the station relays it (one home for relay and approval).

The station's own header (the received event, codes, purge and issue time, with its own
station id), the attention signal, the received audio and the EOMs, through the one broadcast
path (``eas.airing.broadcast``, origin ``relay``), audited ``eas.broadcast`` by the system actor
``relay`` (or the operator who forwarded it).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.eas import archive
from alertstation.eas.airing import broadcast
from alertstation.eas.audio import render_message
from alertstation.eas.forward.config import ForwardSettings
from alertstation.same import SameHeader

RELAY_ACTOR: Final[str] = "relay"
RECEIVED_DIR: Final[str] = "received"


def own_header(header: SameHeader, settings: ForwardSettings) -> SameHeader:
    """Return the received header with the station's own id in place of the sender's."""
    return replace(header, station=settings.station_id)


def recorded_audio(data_dir: Path, name: str | None) -> bytes | None:
    """Return a received message's recording (WAV bytes), or None when there is none."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    path = data_dir / RECEIVED_DIR / name
    if not path.is_file():
        return None
    return path.read_bytes()


def air_received(
    station: Station,
    own: SameHeader,
    audio: Any,
    sample_rate: int,
    settings: ForwardSettings,
    *,
    actor: Actor,
    target: str,
    details: dict[str, Any],
) -> int:
    """Render and queue a received message under ``own`` header; audit it; return its id.

    ``audio`` is the received audio: samples at ``sample_rate``, or WAV bytes (resampled).
    """
    voice = audio if audio is not None and len(audio) else None

    def render(rate: int) -> archive.AiredMessage:
        samples = render_message(
            own,
            sample_rate=rate,
            attention_seconds=settings.attention_seconds,
            voice=voice,
            attention="nwr" if settings.nwr_tone else "eas",
        )
        return archive.AiredMessage(own.encode(), samples, rate)

    row = broadcast.broadcast(
        station,
        origin="relay",
        render=render,
        actor=actor,
        target=target,
        aired_by=actor.username,
        details=details,
        sample_rate=sample_rate,
    )
    return int(row["id"])
