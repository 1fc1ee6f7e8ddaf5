"""Air a received SAME message as the station relays it (one home for relay and approval).

The station's own header (the received event, codes, purge and issue time, with its own
station id), the attention signal, the received audio and the EOMs, through the one broadcast
path (``eas.airing.broadcast``, origin ``relay``), audited ``eas.broadcast`` by the system actor
``relay`` (or the operator who forwarded it).

A national message is relayed live: its audio is a :class:`~alertstation.eas.airing.live.LiveAudio`
the SAME monitor feeds as the source plays it; the station's header and attention signal go
first, the EOM after the source's EOM.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.eas import archive
from alertstation.eas.airing import broadcast
from alertstation.eas.airing.live import LiveAudio
from alertstation.eas.audio import render_eom, render_message
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
    live: LiveAudio | None = None,
) -> int:
    """Render and queue a received message under ``own`` header; audit it; return its id.

    ``audio`` is the received audio: samples at ``sample_rate``, or WAV bytes (resampled).
    ``live`` (a national message relayed as it arrives, at ``sample_rate``) takes its place:
    the archive holds the header, attention signal and EOM until the aired audio replaces it.
    """
    voice = audio if live is None and audio is not None and len(audio) else None
    attention = "nwr" if settings.nwr_tone else "eas"

    def render(rate: int) -> archive.AiredMessage:
        samples = render_message(
            own,
            sample_rate=rate,
            attention_seconds=settings.attention_seconds,
            voice=voice,
            attention=attention,
        )
        if live is not None:
            live.prefix = render_message(
                own,
                sample_rate=rate,
                attention_seconds=settings.attention_seconds,
                include_eom=False,
                attention=attention,
            )
            live.eom = render_eom(sample_rate=rate)
        return archive.AiredMessage(own.encode(), samples, rate)

    row = broadcast.broadcast(
        station,
        origin="relay",
        render=render,
        actor=actor,
        target=target,
        aired_by=actor.username,
        details=details,
        sample_rate=live.sample_rate if live is not None else sample_rate,
        live=live,
    )
    return int(row["id"])
