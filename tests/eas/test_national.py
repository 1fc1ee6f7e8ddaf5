"""National messages (EAN, NPT): ahead of anything queued, and relayed whatever the rules say."""

from __future__ import annotations

import numpy as np

from alertstation.alerts.service import set_alert_settings
from alertstation.audio.same_monitor import SameMonitor
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing.queue import claim_next
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.same import SameHeader
from tests.audio.test_same_monitor import RATE, a_source, archived, feed, message_audio
from tests.eas.airing_support import queue_message
from tests.support import StationHarness


def queue(station: StationHarness, event: str, codes: list[str]) -> str:
    header = SameHeader.build("WXR", event, codes, (0, 30), "KXYZ/NWS", issued=station.clock())
    message = archive.AiredMessage(header.encode(), np.zeros(800, np.int16), 8000)
    queue_message(station.app.station, message, aired_by="test", origin="forward")
    return header.encode()


def test_a_national_message_goes_ahead_of_what_is_queued(station: StationHarness) -> None:
    first = queue(station, "TOR", ["039173"])
    queue(station, "SVR", ["039173"])
    national = queue(station, "NPT", ["000000"])
    assert claim_next(station.engine, station.clock()).header == national
    # Nothing else starts while it is on the air; the rest keeps its order afterwards.
    assert claim_next(station.engine, station.clock()) is None
    assert first.startswith("ZCZC-WXR-TOR-")


def test_an_npt_relays_although_every_rule_says_wait(station: StationHarness) -> None:
    source = a_source(station, "relayed", relay=True)
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
        save_rule_book(conn, {"rules": [{"mode": "manual"}]}, by="t", now=station.clock())
    header = SameHeader.build("PEP", "NPT", ["000000"], (0, 30), "KXYZ/NWS", issued=station.clock())
    feed(SameMonitor(station.app.station, RATE), source, message_audio(header.encode()))
    (row,) = archived(station)
    assert row.header.startswith("ZCZC-PEP-NPT-000000+0030-") and row.aired_by == "relay"
