"""The EAS station log (47 CFR 11.35): every entry written in the transaction of its event.

Other code writes to it through :func:`record_entry` (``alertstation.eas.log.record``); pages,
API and exports read it through ``service`` and ``export``.
"""

from alertstation.eas.log.record import (
    KINDS,
    TEST_EVENTS,
    airing_kind,
    received_kind,
    record_entry,
)

__all__ = ["KINDS", "TEST_EVENTS", "airing_kind", "received_kind", "record_entry"]
