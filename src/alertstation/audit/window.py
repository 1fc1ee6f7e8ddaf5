"""The audit export window: how many days back the CSV and PDF exports of the log reach.

Admins set it on the settings page (``audit_export_days`` of the application section, checked
and saved by ``alertstation.settings_admin.sections``, a layer above). The exports read it here,
straight from the saved section's row; with no saved value the default applies.
"""

from __future__ import annotations

import json
from typing import Final

from sqlalchemy import Connection, select

from alertstation.db.tables import operations_settings

APPLICATION_SECTION: Final[str] = "application"
EXPORT_DAYS_FIELD: Final[str] = "audit_export_days"
DEFAULT_EXPORT_DAYS: Final[int] = 365


def export_window_days(conn: Connection) -> int:
    """Return the saved audit export window in days (the default until saved)."""
    data = conn.execute(
        select(operations_settings.c.data).where(
            operations_settings.c.section == APPLICATION_SECTION
        )
    ).scalar()
    if data is None:
        return DEFAULT_EXPORT_DAYS
    days = json.loads(data).get(EXPORT_DAYS_FIELD, DEFAULT_EXPORT_DAYS)
    return days if isinstance(days, int) and days > 0 else DEFAULT_EXPORT_DAYS
