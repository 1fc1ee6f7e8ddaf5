"""The saved settings sections' table, ``operations_settings``.

It is defined with the platform tables in ``alertstation.db.tables`` (audit, below this package,
reads its export window from it); this module keeps the settings package's import path.
"""

from alertstation.db.metadata import metadata
from alertstation.db.tables import operations_settings

__all__ = ["metadata", "operations_settings"]
