"""Helpers of the airing tests: queue a rendered message through the one broadcast path, and an
``aplay`` stand-in that plays in scaled real time (there is no sound card here)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

from alertstation.audit.actor import Actor
from alertstation.context import Station
from alertstation.eas.airing import broadcast
from alertstation.eas.archive import AiredMessage


def queue_message(
    station: Station,
    message: AiredMessage,
    *,
    aired_by: str | None = "ops",
    origin: str = "manual",
    archive_only: bool = False,
) -> dict[str, Any]:
    """Queue an already rendered message as ``origin`` (no output check); return its row."""
    return broadcast.broadcast(
        station,
        origin=origin,
        render=lambda _rate: message,
        actor=Actor.system(aired_by or "test"),
        target="test",
        aired_by=aired_by,
        archive_only=archive_only,
        sample_rate=message.sample_rate,
    )


def timed_aplay(folder: Path, scale: float = 0.05) -> Path:
    """Write an ``aplay`` that keeps each WAV it gets as ``play-N.wav`` and then lasts
    ``scale`` times the WAV's length, as a sound card would (killed early on Stop)."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "aplay"
    program.write_text(
        f"#!{sys.executable}\n"
        "import io, pathlib, sys, time, wave\n"
        "data = sys.stdin.buffer.read()\n"
        f"folder = pathlib.Path({str(folder)!r})\n"
        "n = len(list(folder.glob('play-*.wav')))\n"
        "(folder / f'play-{n}.wav').write_bytes(data)\n"
        "w = wave.open(io.BytesIO(data))\n"
        f"time.sleep(w.getnframes() / w.getframerate() * {scale})\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program
