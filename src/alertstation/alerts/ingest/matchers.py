"""The matchers a batch ingests with: those of the settings stored now, built once per change."""

from __future__ import annotations

import functools
import threading
from typing import Any

from sqlalchemy import Connection

from alertstation.alerts.ingest.sql import _SETTINGS_KEY
from alertstation.alerts.service import AlertSettings, get_alert_settings
from alertstation.alerts.store import Matchers


@functools.lru_cache(maxsize=8)
def _matchers(settings: AlertSettings) -> Matchers:
    """Build the matchers of these settings once (they are immutable and thread-safe)."""
    return settings.matchers()


_settings_lock = threading.Lock()
_matchers_by_key: dict[tuple[Any, ...], Matchers] = {}


def current_matchers(conn: Connection) -> Matchers:
    """Return the matchers of the settings stored now, read inside the caller's transaction.

    One read gives the stored settings rows and the key columns of the boundary's upload; when
    they are the ones seen last, their matchers are reused without parsing the settings again.
    Otherwise the settings are read in full (``get_alert_settings``). The key is the stored
    values themselves, so another database (a restore, a test) never gets stale matchers.
    """
    return matchers_for(conn, tuple(sorted(tuple(row) for row in conn.execute(_SETTINGS_KEY))))


def matchers_for(conn: Connection, key: tuple[Any, ...]) -> Matchers:
    """Return the matchers of the settings ``key`` (_SETTINGS_KEY's rows) names."""
    found = _matchers_by_key.get(key)
    if found is not None:
        return found
    matchers = _matchers(get_alert_settings(conn))
    with _settings_lock:
        if len(_matchers_by_key) >= 8:
            _matchers_by_key.clear()
        _matchers_by_key[key] = matchers
    return matchers
