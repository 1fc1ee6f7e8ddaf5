"""What the source lists add for the cards, on both backends: clipping, last header, peak."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import insert

from alertstation.audio import alerts
from alertstation.audio.sources import SourceConfig, create_source, set_status
from alertstation.audio.tables import received_eas_messages
from alertstation.db.engine import begin_write
from tests.audio.writers import SINE_COMMAND
from tests.support import StationHarness

OLD_HEADER = "ZCZC-WXR-SVR-039173+0030-3281700-KXYZ/NWS-"
NEW_HEADER = "ZCZC-WXR-TOR-039173+0030-3281720-KXYZ/NWS-"


def _heard(conn: object, source_id: int, header: str, at: object) -> None:
    conn.execute(  # type: ignore[attr-defined]
        insert(received_eas_messages).values(
            source_id=source_id,
            header=header,
            message_key=header[:32],
            event_code=header[9:12],
            received_at=at,
            expires_at=at,
            bursts=3,
        )
    )


def test_the_lists_carry_clipping_the_last_header_peak_and_address(
    audio_station: StationHarness,
) -> None:
    now = audio_station.clock()
    with begin_write(audio_station.engine) as conn:
        loud = create_source(
            conn, SourceConfig(name="Loud", kind="stream", url="http://127.0.0.1:9/a"), now
        )
        quiet = create_source(
            conn, SourceConfig(name="Quiet", kind="stream", url="http://127.0.0.1:9/b"), now
        )
        radio = create_source(
            conn,
            SourceConfig(name="Radio", kind="receiver", command=tuple(SINE_COMMAND)),
            now,
        )
        set_status(conn, loud, level_dbfs=-3.5, peak_dbfs=-0.0)
        alerts.open_alert(conn, loud, "clipping", now)
        # Quiet clipped once, but that alert ended: no mark.
        alerts.open_alert(conn, quiet, "clipping", now - timedelta(minutes=5))
        alerts.end_alert(conn, quiet, "clipping", now - timedelta(minutes=4))
        _heard(conn, loud, OLD_HEADER, now - timedelta(minutes=20))
        _heard(conn, loud, NEW_HEADER, now - timedelta(minutes=1))
    audio_station.add_user("ops", "operator")
    ops = audio_station.sign_in("ops")
    items = {item["name"]: item for item in ops.request("GET", "/api/audio/sources").json["items"]}
    assert items["Loud"]["clipping"] is True and items["Quiet"]["clipping"] is False
    assert items["Loud"]["peak_dbfs"] == 0.0 and items["Quiet"]["peak_dbfs"] is None
    last = items["Loud"]["last_header"]
    assert last["header"] == NEW_HEADER
    assert "Tornado Warning" in last["text"]
    assert items["Quiet"]["last_header"] is None
    assert items["Loud"]["base_url"] == f"/api/audio/sources/{loud}"
    assert items["Radio"]["base_url"] == f"/api/radio/receivers/{radio}"
    receivers = ops.request("GET", "/api/radio/receivers").json["items"]
    assert [item["id"] for item in receivers] == [radio]
    # Resolving the going clipping alert takes the mark away.
    with begin_write(audio_station.engine) as conn:
        alerts.resolve_all(conn, "ops", now)
    items = {item["name"]: item for item in ops.request("GET", "/api/audio/sources").json["items"]}
    assert items["Loud"]["clipping"] is False
