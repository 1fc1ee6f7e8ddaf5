"""Notifications: news written where it happens, delivered by the worker through apprise.

Whatever has news calls :func:`notify` in its own transaction; the worker's delivery job
(``alertstation.notifications.delivery``, the only module that imports apprise) sends it to
every enabled channel subscribed to the event. The decoder-monitor and ENDEC feeds
(``alertstation.notifications.feeds``) share the delivery log and its retries.
"""

from alertstation.notifications.events import EVENTS
from alertstation.notifications.service import notify

__all__ = ["EVENTS", "notify"]
