"""The EAS and alert pages at phone and desktop widths, checked by axe-core and for overflow.

One walk per width (the CI budget is small): the send dialog, the ON AIR banner with Stop,
received messages, the approval queue, forwarding rules, the location page and an alert's
page with its "Why" and codes table; on the phone also every menu opened. Each must fit the
viewport (no sideways scroll; every control inside it, or inside a table that scrolls within
its panel) and pass axe-core. ``ALERTSTATION_SHOTS=<folder>`` saves a screenshot of each and
what failed.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import insert, select

from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.audio.tables import received_eas_messages
from alertstation.db.engine import begin_write
from alertstation.eas.airing.tables import eas_airing_outputs, eas_airing_queue
from alertstation.eas.forward import service as forward
from alertstation.eas.tables import eas_archive
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.browser.test_location_page import WIDTHS as _WIDTHS
from tests.browser.test_location_page import load_catalog
from tests.eas.test_forward_support import cap_message, ingest, later, vtec

PASSWORD = "admin password for the page walk"
WIDTHS = {"phone": _WIDTHS["phone"], "desktop": {"width": 1366, "height": 900}}
HEADER = "ZCZC-WXR-TOR-039137-039003+0030-3331200-KXYZ/NWS-"
SHOTS = os.environ.get("ALERTSTATION_SHOTS")  # a folder: save a screenshot of every page


def seed(live_server: LiveServer) -> int:
    """An in-area Tornado Warning waiting for approval, a received header, and one on the air."""
    station = live_server.app.station
    now = datetime.now(UTC)
    with begin_write(live_server.engine) as conn:
        set_alert_settings(conn, zone_codes=["OHZ016", "039137", "040109"])
    expires = later(now, minutes=70)
    data = cap_message(
        "tor-walk", now, expires=expires, vtec_strings=[vtec("NEW", 7, now, expires)]
    )
    ingest(station, data, now)
    forward.forward_job(station)
    with begin_write(live_server.engine) as conn:
        source_id = create_source(
            conn, SourceConfig(name="NOAA Weather Radio KXYZ", kind="stream",
                               url="http://127.0.0.1:9/"), now
        )  # fmt: skip
        conn.execute(
            insert(received_eas_messages).values(
                source_id=source_id, header=HEADER, message_key=HEADER[:-10],
                event_code="TOR", received_at=now, expires_at=now + timedelta(minutes=30),
                bursts=3, relay="not relayed: relay is off for this source",
            )
        )  # fmt: skip
        archive_id = conn.execute(
            insert(eas_archive).values(
                header=HEADER, wav_path="walk.wav", sample_rate=22050, duration=29.0,
                aired_by="chief", aired_at=now,
            )
        ).inserted_primary_key[0]  # fmt: skip
        queue_id = conn.execute(
            insert(eas_airing_queue).values(
                archive_id=archive_id, origin="manual", state="airing", enqueued_at=now,
                started_at=now,
            )
        ).inserted_primary_key[0]  # fmt: skip
        conn.execute(
            insert(eas_airing_outputs).values(queue_id=queue_id, name="icecast", started_at=now)
        )
        return conn.execute(
            select(cap_alerts.c.id).where(cap_alerts.c.identifier == "tor-walk")
        ).scalar_one()


def fits(page: Page) -> dict[str, Any]:
    """What sticks out of the viewport sideways: the page's overflow and controls outside it."""
    return page.evaluate(
        """() => {
          const width = window.innerWidth;
          const outside = [...document.querySelectorAll('a, button, input, select, textarea')]
            .filter(e => e.offsetParent !== null && !e.classList.contains('skip-link'))
            .filter(e => !e.closest('details:not([open])'))
            .filter(e => { const r = e.getBoundingClientRect();
                           return r.width > 0 && (r.left < -1 || r.right > width + 1); })
            .filter(e => !e.closest('.table-scroll'))
            .map(e => e.outerHTML.slice(0, 80));
          const wide = [...document.querySelectorAll('main *')]
            .filter(e => e.getBoundingClientRect().right > width + 1)
            .map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 8);
          const overflow = document.documentElement.scrollWidth - width;
          return {overflow: overflow, outside: outside, wide: wide};
        }"""
    )


def check(page: Page, name: str, width: str, problems: dict[str, Any]) -> None:
    page.wait_for_load_state("networkidle")
    if SHOTS:
        shot = Path(SHOTS) / f"{name}-{width}.png"
        page.screenshot(path=str(shot), full_page=name != "send-dialog")  # a dialog in view
    found = fits(page)
    violations = axe_violations(page)
    if found["overflow"] > 0 or found["outside"] or violations:
        problems[name] = {**found, "axe": violations}


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_eas_and_alert_pages_fit_and_pass_axe(
    page: Page, page_log: PageLog, live_server: LiveServer, width: str
) -> None:
    load_catalog(live_server)
    alert_id = seed(live_server)
    page.set_viewport_size(WIDTHS[width])
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    problems: dict[str, Any] = {}

    page.goto("/eas/manual")
    banner = page.locator("#broadcast-banner")
    expect(banner).to_contain_text("ON AIR")
    check(page, "on-air-banner", width, problems)
    page.locator("#eas-event").select_option("RWT")
    page.get_by_label("SAME location codes", exact=False).fill("039137 039003")
    page.get_by_role("button", name="Create activation").click()
    page.locator("#eas-activations tbody tr").get_by_role("button", name="Send", exact=True).click()
    expect(page.locator("#eas-confirm")).to_be_visible()
    check(page, "send-dialog", width, problems)
    page.keyboard.press("Escape")

    if width == "phone":  # every menu, opened, fits the phone (on a desktop there is room)
        page.get_by_role("button", name="Menu").click()  # the phone's navigation is behind it
        for group in page.locator("nav .nav-group details").all():
            group.locator("summary").click()
            check(page, "menu " + group.locator("summary").inner_text(), width, problems)
            group.locator("summary").click()
        page.get_by_role("button", name="Menu").click()

    for name, path in (
        ("received", "/eas/received"),
        ("pending", "/eas/pending"),
        ("forward", "/eas/forward"),
        ("location", "/admin/location_settings"),
        ("alert", f"/alerts/{alert_id}"),
    ):
        page.goto(path)
        check(page, name, width, problems)
    page.goto("/eas/received")  # the shared action script posts and reloads
    page.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("#eas-received")).to_contain_text("Acknowledged by chief")
    if SHOTS:
        Path(SHOTS, f"problems-{width}.json").write_text(json.dumps(problems, indent=1))
    assert problems == {}
    assert page_log.page_errors == [] and page_log.csp_violations() == []
