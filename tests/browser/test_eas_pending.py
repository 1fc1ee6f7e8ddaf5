"""A 2-minute hold in a real browser, with the station's injected clock: the rule is saved on
/eas/forward, the message airs after the hold, and an operator's Hold on /eas/pending keeps it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from alertstation.alerts.service import set_alert_settings
from alertstation.db.engine import begin_write
from alertstation.eas.forward import service as forward
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.eas.test_forward_support import archived, cap_message, ingest, later, vtec
from tests.support import Clock

PASSWORD = "operator password for tests"
CLOCK = Clock()


def tornado(identifier: str, etn: int) -> bytes:
    now = CLOCK.now
    expires = later(now, minutes=70)
    return cap_message(
        identifier, now, expires=expires, vtec_strings=[vtec("NEW", etn, now, expires)]
    )


@pytest.mark.parametrize("live_server", [{"clock": CLOCK}], indirect=True)
def test_a_hold_airs_after_its_time_and_an_operators_hold_keeps_it(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    station = live_server.app.station
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/eas/forward")
    page.get_by_role("button", name="Add a rule").click()
    rule = page.locator("#eas-rules li.rule")
    rule.get_by_label("Events").fill("TOR")
    rule.get_by_label("Mode").select_option("hold")
    rule.get_by_label("Hold minutes (1-120)").fill("2")
    page.get_by_role("button", name="Save rules").click()
    expect(page.locator("#eas-rules-status")).to_have_text("Saved 1 rules.")

    with begin_write(live_server.engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    ingest(station, tornado("tor-1", 1), CLOCK.now)
    forward.forward_job(station)
    page.goto("/eas/pending")
    expect(page.locator(".pending-item")).to_have_count(1)
    expect(page.locator(".countdown")).to_have_text(re.compile(r"^[12]:[0-5]\d$"))  # from 2:00
    CLOCK.advance(seconds=121)
    forward.forward_job(station)
    assert len(archived(live_server.engine)) == 1

    ingest(station, tornado("tor-2", 2), CLOCK.now)
    forward.forward_job(station)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto("/eas/pending")
    reject = page.get_by_role("button", name="Reject")
    reject.scroll_into_view_if_needed()  # below the fold under the wrapped menu; never off-side
    expect(reject).to_be_in_viewport()
    page.get_by_role("button", name="Hold").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".pending-item")).to_contain_text("Held by ops")
    CLOCK.advance(minutes=5)
    forward.forward_job(station)
    assert len(archived(live_server.engine)) == 1

    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Forward now").click()
    expect(page.locator(".pending-item")).to_have_count(0)
    forward.forward_job(station)
    assert len(archived(live_server.engine)) == 2
    assert page_log.console_errors() == [] and page_log.csp_violations() == []
