"""Build the outputs one airing plays to: the archive, and Icecast and ALSA when enabled.

Kept apart from the package's shared ground (``Output``, ``OutputError``, ``play_all``), which
the output modules themselves import.
"""

from __future__ import annotations

import threading
from pathlib import Path

from alertstation.eas.airing.outputs import ArchiveOutput, Output
from alertstation.eas.airing.outputs.alsa import AlsaOutput
from alertstation.eas.airing.outputs.icecast import IcecastOutput, IcecastTarget
from alertstation.eas.airing.settings import AiringSettings


def build_outputs(
    settings: AiringSettings, wav_path: Path, *, cancel: threading.Event | None = None
) -> list[Output]:
    """Return the archive output and every output the settings enable."""
    outputs: list[Output] = [ArchiveOutput(wav_path)]
    if settings.icecast_enabled:
        target = IcecastTarget(
            host=settings.icecast_host,
            port=settings.icecast_port,
            mount=settings.icecast_mount,
            username=settings.icecast_username,
            password=settings.icecast_password or "",
            tls=settings.icecast_tls,
        )
        outputs.append(IcecastOutput(target, cancel=cancel))
    if settings.alsa_enabled:
        outputs.append(AlsaOutput(settings.alsa_device, cancel=cancel))
    return outputs
