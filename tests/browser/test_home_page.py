"""The overview page in Chromium: the station summary on a phone (390 px) and a desktop, no
sideways scroll, no serious accessibility violation, and each item's page reached by keyboard.
``ALERTSTATION_SHOTS=<folder>`` saves a screenshot at each width."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from playwright.sync_api import Page, expect
from sqlalchemy import insert

from alertstation.audio.tables import audio_sources, received_eas_messages
from alertstation.db.engine import begin_write
from alertstation.eas.airing import settings as airing_settings
from alertstation.eas.airing.tables import eas_output_health
from alertstation.eas.forward.rulebook import save_rule_book
from alertstation.operations.compliance.tables import compliance_alarms
from tests.browser.accessibility import serious_violations
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "home page password for the browser"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
SHOTS = os.environ.get("ALERTSTATION_SHOTS")  # a folder: save a screenshot at each width


def _seed(live_server: LiveServer) -> str:
    now = live_server.app.station.clock()
    stamp = f"{now.timetuple().tm_yday:03d}{now:%H%M}"
    header = f"ZCZC-WXR-SVR-039085+0030-{stamp}-KCLE/NWS-"
    with begin_write(live_server.engine) as conn:
        save_rule_book(
            conn,
            {"rules": [{"events": ["TOR"], "mode": "auto"}], "default": {"mode": "manual"}},
            by="chief",
            now=now,
        )
        airing_settings.save(
            conn,
            {"icecast_enabled": True, "icecast_password": "pw", "icecast_port": 8125},
            updated_by="chief",
            now=now,
        )
        conn.execute(
            insert(eas_output_health).values(
                name="icecast",
                target="127.0.0.1:8125",
                reachable=False,
                detail="no answer within 5 s: connection refused",
                checked_at=now,
            )
        )
        source = conn.execute(
            insert(audio_sources)
            .values(name="wxr-162-550", kind="stream", url="https://radio.example/wxr")
            .values(created_at=now, updated_at=now, state="running")
            .returning(audio_sources.c.id)
        ).scalar_one()
        conn.execute(
            insert(received_eas_messages).values(
                source_id=source,
                header=header,
                message_key=header,
                event_code="SVR",
                received_at=now,
                expires_at=now + timedelta(minutes=30),
                bursts=3,
            )
        )
        conn.execute(
            insert(compliance_alarms).values(
                kind="station_test", source="station", detail="no test in 7 days", raised_at=now
            )
        )
    return header


def _serious(page: Page) -> list[str]:
    return serious_violations(page)


def _shot(page: Page, width: int) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"home-{width}.png"), full_page=True)


def _no_sideways_scroll(page: Page) -> None:
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow} px"


def test_the_summary_on_a_phone_and_a_desktop_reached_by_keyboard(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    header = _seed(live_server)
    create_user(live_server, "chief", "operator", PASSWORD)
    page.set_viewport_size(PHONE)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto(live_server.url_for("/"))

    summary = page.locator(".station-summary")
    expect(summary.locator("#home-on-air")).to_contain_text("Nothing is on the air.")
    expect(summary.locator("#home-forwarding")).to_contain_text("1 of 1 rule differs")
    expect(summary.locator('[data-output="icecast"]')).to_contain_text("unreachable")
    expect(summary.locator("#home-alarms")).to_contain_text("no weekly test aired in 7 days")
    received = summary.locator("#home-received li").first
    expect(received).to_contain_text(header)
    expect(received.locator(".plain-text")).to_contain_text("Severe Thunderstorm Warning")
    expect(summary.locator("#home-weekly-test")).to_contain_text("schedule is off")
    for heading in ("#home-on-air", "#home-weekly-test", "#home-received"):
        box = summary.locator(heading).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 0.5, heading
    _shot(page, PHONE["width"])
    _no_sideways_scroll(page)
    assert _serious(page) == []

    page.set_viewport_size(DESKTOP)
    _shot(page, DESKTOP["width"])
    _no_sideways_scroll(page)
    assert _serious(page) == []

    # Keyboard only: Tab to the approvals item's link and follow it with Enter.
    page.locator("body").focus()
    for _ in range(120):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Approvals waiting":
            break
    else:
        raise AssertionError("the approvals link was never reached with Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(live_server.url_for("/eas/pending"))
    assert page_log.console_errors() == []
