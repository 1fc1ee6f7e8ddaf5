"""National messages (EAN, NPT): ahead of anything queued, and relayed whatever the rules say."""

from __future__ import annotations

import numpy as np

from alertstation.alerts.service import set_alert_settings
from alertstation.audio.same_monitor import SameMonitor
from alertstation.db.engine import begin_write
from alertstation.eas import archive
from alertstation.eas.airing import live
from alertstation.eas.airing.queue import claim_next
from alertstation.eas.decode import decode_pcm
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.same import SameHeader
from tests.audio.test_same_monitor import CHUNK, RATE, a_source, archived, feed, message_audio
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


def test_a_national_message_is_fed_live_from_its_header_to_its_eom(
    station: StationHarness,
) -> None:
    source = a_source(station, "live", relay=True)
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["039173"])
    header = SameHeader.build("PEP", "NPT", ["000000"], (0, 30), "KXYZ/NWS", issued=station.clock())
    audio = message_audio(header.encode(), voice_seconds=4.0)
    monitor = SameMonitor(station.app.station, RATE)
    offset = 5 * RATE  # the EAS monitor starts hearing this source mid-session
    for start in range(0, audio.size, CHUNK):
        monitor(source, audio[start : start + CHUNK], offset + start)
        if start == 0:
            assert archived(station) == []

    (row,) = archived(station)
    fed = live.take(row.id)
    assert fed is not None and fed.end_reason == "eom"
    parts = list(fed.read("test", lambda: False))
    body = np.concatenate(parts[1:-1])
    # From the end of the header bursts to just before the EOM's preamble: the pause, the 8 s
    # attention signal, the 4 s voice and their pauses; neither the source's header nor its EOM.
    assert 14.0 * RATE < body.size < 15.0 * RATE
    assert decode_pcm(body, RATE) == []
    assert [d.kind for d in decode_pcm(np.concatenate(parts), RATE)] == ["header", "eom"]
