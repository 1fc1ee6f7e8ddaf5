"""The events a channel may subscribe to, and the feeds that share the delivery log."""

from __future__ import annotations

from typing import Final

ALERT_IN_AREA: Final[str] = "alert_in_area"
PENDING_APPROVAL: Final[str] = "pending_approval"
AIRED: Final[str] = "aired"
RELAYED: Final[str] = "relayed"
STOPPED: Final[str] = "stopped"
FAILED: Final[str] = "failed"
AUDIO_ALARM: Final[str] = "audio_alarm"
COMPLIANCE_ALARM: Final[str] = "compliance_alarm"
WORKER_CHANGE: Final[str] = "worker_change"
CERTIFICATE_EXPIRY: Final[str] = "certificate_expiry"
#: Not subscribable: what ``POST /api/notifications/channels/{id}/test`` sends.
TEST: Final[str] = "test"

#: Every subscribable event and how the page names it.
EVENTS: Final[dict[str, str]] = {
    ALERT_IN_AREA: "Alert in area",
    PENDING_APPROVAL: "Pending approval",
    AIRED: "Aired",
    RELAYED: "Relayed",
    STOPPED: "Stopped",
    FAILED: "Failed airing",
    AUDIO_ALARM: "Audio alarm (silence, source down)",
    COMPLIANCE_ALARM: "Compliance alarm",
    WORKER_CHANGE: "Worker or leader change",
    CERTIFICATE_EXPIRY: "Certificate expiry (14 and 3 days ahead)",
}

#: The two feeds of received and sent EAS messages (``alertstation.notifications.feeds``).
MONITOR_FEED: Final[str] = "monitor"
ENDEC_FEED: Final[str] = "endec"
FEEDS: Final[tuple[str, str]] = (MONITOR_FEED, ENDEC_FEED)

#: Delivery states.
PENDING: Final[str] = "pending"
SENT: Final[str] = "sent"
DELIVERY_FAILED: Final[str] = "failed"
