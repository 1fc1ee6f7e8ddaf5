"""Build the outputs one airing plays to: the archive, and Icecast and ALSA when enabled.

Kept apart from the package's shared ground (``Output``, ``OutputError``, ``play_all``), which
the output modules themselves import.
"""

from __future__ import annotations

from pathlib import Path

from alertstation.eas.airing.outputs import AirControl, ArchiveOutput, Output
from alertstation.eas.airing.outputs.alsa import AlsaOutput
from alertstation.eas.airing.outputs.icecast import IcecastOutput, IcecastTarget
from alertstation.eas.airing.settings import AiringSettings


def real_outputs(settings: AiringSettings) -> list[str]:
    """Return the names of the real outputs (they put a message on the air) the settings enable."""
    names = []
    if settings.icecast_enabled:
        names.append("icecast")
    if settings.alsa_enabled:
        names.append("alsa")
    return names


def build_outputs(
    settings: AiringSettings,
    wav_path: Path,
    *,
    control: AirControl | None = None,
    archive_only: bool = False,
) -> list[Output]:
    """Return the archive output and every output the settings enable (none but the archive
    when the operator chose archive only)."""
    control = control or AirControl()
    outputs: list[Output] = [ArchiveOutput(wav_path, control=control)]
    if archive_only:
        return outputs
    if settings.icecast_enabled:
        target = IcecastTarget(
            host=settings.icecast_host,
            port=settings.icecast_port,
            mount=settings.icecast_mount,
            username=settings.icecast_username,
            password=settings.icecast_password or "",
            tls=settings.icecast_tls,
        )
        outputs.append(IcecastOutput(target, control=control))
    if settings.alsa_enabled:
        outputs.append(AlsaOutput(settings.alsa_device, control=control))
    return outputs
