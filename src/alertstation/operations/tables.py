"""The operations settings table now lives in ``alertstation.settings_admin.tables``.

It sits below eas and audio so that they can read the settings; this module keeps the old
import path working.
"""

from alertstation.settings_admin.tables import metadata, operations_settings

__all__ = ["metadata", "operations_settings"]
