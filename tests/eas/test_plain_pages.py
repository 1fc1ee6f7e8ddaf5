"""The plain-language text on the pages: send page, queue, archive, received, audit details."""

from __future__ import annotations

import html
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from alertstation.audio.tables import received_eas_messages
from alertstation.db.engine import begin_write
from alertstation.same import SameHeader
from tests.support import SignedIn, StationHarness

RWT = {"event": "RWT", "locations": "051059, 051107", "purge": "0030", "station_id": "WXYZ/FM"}
ISSUED = "An EAS Participant has issued a Required Weekly Test for Fairfax, VA and Loudoun, VA"
PAGE = {"Accept": "text/html"}


@pytest.fixture
def admin(station: StationHarness) -> SignedIn:
    station.add_user("chief", "admin")
    chief = station.sign_in("chief")
    saved = chief.request(
        "PUT", "/api/settings/application", json={"time_zone": "America/New_York"}
    )
    assert saved.status_code == 200, saved.text
    return chief


def _text(response: object) -> str:
    return html.unescape(response.text)  # type: ignore[attr-defined]


def test_the_send_page_queue_archive_and_audit_show_the_plain_text(
    station: StationHarness, admin: SignedIn
) -> None:
    created = admin.request("POST", "/eas/manual/events", json=RWT)
    assert created.status_code == 201, created.text
    draft = _text(admin.request("GET", "/eas/manual", headers=PAGE))
    # The draft reads as it would air if sent now, in the station's time zone.
    assert draft.count(ISSUED) == 1
    assert " EST. Message from WXYZ/FM." in draft or " EDT. Message from WXYZ/FM." in draft

    activation = created.json["activation"]["id"]
    sent = admin.request(
        "POST", f"/eas/manual/events/{activation}/send", json={"archive_only": True}
    )
    assert sent.status_code == 200, sent.text
    header = SameHeader.parse(sent.json["message"]["header"])
    page = _text(admin.request("GET", "/eas/manual", headers=PAGE))
    assert page.count(ISSUED) == 2  # the queue and the archive (the sent draft shows none)
    local = header.issued_at(station.clock().year).astimezone(ZoneInfo("America/New_York"))
    assert f"beginning at {local.hour % 12 or 12}:{local.minute:02d} " in page

    log = _text(admin.request("GET", "/logs?action=eas.broadcast", headers=PAGE))
    assert ISSUED in log  # the eas.broadcast row's details carry the header


def test_received_messages_show_the_plain_text(station: StationHarness, admin: SignedIn) -> None:
    now = station.clock()
    header = SameHeader.build("WXR", "TOR", ("039137", "039003"), (0, 30), "KCLE/NWS", issued=now)
    with begin_write(station.engine) as conn:
        conn.execute(
            received_eas_messages.insert().values(
                header=header.encode(),
                message_key=header.encode(),
                event_code="TOR",
                received_at=now,
                expires_at=now + timedelta(minutes=30),
                bursts=3,
            )
        )
    page = _text(admin.request("GET", "/eas/received", headers=PAGE))
    assert (
        "The National Weather Service has issued a Tornado Warning for Putnam, OH and Allen, OH"
        in page
    )
