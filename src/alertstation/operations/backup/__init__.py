"""Back the station up while it runs, and restore it without ever leaving half a station.

``writer`` writes an archive, ``archive`` is its format (members, limits, MAC), ``redaction``
what an operator's backup leaves out, ``pgscript`` reads and replays a PostgreSQL dump, and
``restore`` validates an archive in a staging folder and switches over as one step; a switch
that was killed is finished or dropped by ``alertstation.db.restore_plan``.
"""

from alertstation.operations.backup.archive import BackupError
from alertstation.operations.backup.restore import RestoreReport, restore_archive
from alertstation.operations.backup.writer import (
    HASH_WARNING,
    REDACTED_NOTE,
    BackupReport,
    write_backup,
)

__all__ = [
    "HASH_WARNING",
    "REDACTED_NOTE",
    "BackupError",
    "BackupReport",
    "RestoreReport",
    "restore_archive",
    "write_backup",
]
