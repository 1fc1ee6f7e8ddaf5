"""Import every domain's tables so the shared metadata describes the whole schema.

Add a line here when a new domain package gains a ``tables.py``; the no-drift test then holds the
migrations to it.
"""

import alertstation.alerts.poll.tables  # noqa: F401
import alertstation.alerts.tables  # noqa: F401
import alertstation.audio.tables  # noqa: F401
import alertstation.audit.tables  # noqa: F401
import alertstation.auth.tables  # noqa: F401
import alertstation.db.tables  # noqa: F401
import alertstation.eas.airing.tables  # noqa: F401
import alertstation.eas.forward.tables  # noqa: F401
import alertstation.eas.log.tables  # noqa: F401
import alertstation.eas.tables  # noqa: F401
import alertstation.notifications.tables  # noqa: F401
import alertstation.operations.compliance.tables  # noqa: F401
import alertstation.operations.tables  # noqa: F401
import alertstation.security.autoban.tables  # noqa: F401
import alertstation.security.bans.tables  # noqa: F401
import alertstation.security.hostban.tables  # noqa: F401
import alertstation.traffic.tables  # noqa: F401
import alertstation.zones.tables  # noqa: F401
from alertstation.db.metadata import metadata

__all__ = ["metadata"]
