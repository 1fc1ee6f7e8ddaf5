"""Put a rendered message on the air: the one entry point manual sends, resends and
auto-forward share.

:func:`air_message` archives the message (WAV + sidecar + ``eas_archive`` row) and airs it
through the configured outputs, one message at a time.
"""

from __future__ import annotations

import logging
from typing import Any

from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.eas import archive

log = logging.getLogger("alertstation.eas")


def air_message(
    station: Station,
    message: archive.AiredMessage,
    *,
    aired_by: str | None,
    activation_id: int | None = None,
    origin: str = "manual",
) -> dict[str, Any]:
    """Archive ``message`` and air it; return its archive row as a dict.

    ``origin`` says where it came from (``manual``, ``resend``, ``forward``, ``rwt``).
    """
    with station.airing.airing():
        aired_at = station.clock()
        wav_name = archive.write_files(
            station.settings.data_dir, message, aired_by=aired_by, aired_at=aired_at
        )
        with begin_write(station.engine) as conn:
            message_id = archive.insert_row(
                conn,
                header=message.header,
                wav_name=wav_name,
                sample_rate=message.sample_rate,
                duration=message.duration,
                activation_id=activation_id,
                aired_by=aired_by,
                aired_at=aired_at,
            )
            saved = archive.get_row(conn, message_id)
    log.warning("EAS message aired (%s): %s", origin, message.header)
    return archive.row_as_dict(saved)
