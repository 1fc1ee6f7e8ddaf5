"""Alert pages in a real browser: a cancelled alert's badge, the live active list, and the
list's filters kept in the address."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.sync_api import Page, expect
from sqlalchemy import select

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.tables import cap_alerts
from tests.alerts.test_alert_list import ADVISORY
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "viewer password for alerts"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"


def _import(live_server: LiveServer, name: str, day: str | None = None) -> None:
    data = (FIXTURES / name).read_bytes()
    if day:  # move the sample to ``day`` (VTEC dates too) so it is current
        data = data.replace(b"2025-05-14", day.encode())
        data = data.replace(b"250514T", (day[2:4] + day[5:7] + day[8:10] + "T").encode())
    results = import_messages(live_server.engine, data, name)
    assert [getattr(r, "outcome", r) for r in results] == ["stored"]


def test_a_partly_cancelled_alert_shows_how_each_code_ended(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "watcher", "viewer", PASSWORD)
    _import(live_server, "cap12_svr_new.xml")
    _import(live_server, "cap12_svr_can.xml")
    with live_server.engine.connect() as conn:
        alert_id = conn.execute(
            select(cap_alerts.c.id).where(cap_alerts.c.identifier == NEW_ID)
        ).scalar_one()
    sign_in(page, live_server, "watcher", PASSWORD)
    page.goto(f"/alerts/{alert_id}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Severe Thunderstorm Warning")
    # The CAN names OKC109 only: the warning ran on for OKC017 until it expired.
    expect(page.locator("#alert-badges .badge")).to_have_text("EXPIRED")
    cancelled = page.locator("tr", has_text="OKC109").locator(".code-state")
    expect(cancelled).to_have_text("cancelled 2025-05-14 22:52 UTC")
    expect(page.locator("tr", has_text="OKC017").locator(".code-state")).to_contain_text("expired")
    expect(page.locator("#alert-vtec")).to_contain_text("/O.NEW.KOUN.SV.W.0045.")
    raw = page.locator("#alert-raw pre")
    expect(raw).to_be_hidden()
    page.locator("#alert-raw summary").click()
    expect(raw).to_contain_text("urn:oasis:names:tc:emergency:cap:1.2")
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_active_page_shows_a_new_alert_without_a_reload(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "watcher", "viewer", PASSWORD)
    sign_in(page, live_server, "watcher", PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Alerts").click()
    page.wait_for_url("**/alerts")
    expect(page.locator("#alerts-empty")).to_be_visible()
    expect(page.locator("#alerts-table")).to_be_hidden()
    # Wait for the page's first look at the broadcast state, then store an alert.
    with page.expect_response(lambda response: "/api/broadcast/state" in response.url):
        pass
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    _import(live_server, "cap12_svr_new.xml", tomorrow)
    rows = page.locator("#alerts-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Severe Thunderstorm Warning")
    expect(page.locator("#alerts-empty")).to_be_hidden()
    expect(page.locator("#alerts-status")).to_have_text("1 active alert")
    # The list changed in place: the document was never reloaded.
    assert len(page_log.responses_under("/alerts")) == 1
    assert page_log.responses_under("/api/broadcast/state")
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_alert_list_filters_live_in_the_address_and_survive_a_reload(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "watcher", "viewer", PASSWORD)
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    _import(live_server, "cap12_svr_new.xml", tomorrow)
    data = (FIXTURES / "cap12_svr_new.xml").read_bytes().replace(b".001.1", b".002.1")
    data = data.replace(b"2025-05-14", tomorrow.encode())
    data = data.replace(b"250514T", (tomorrow[2:4] + tomorrow[5:7] + tomorrow[8:10] + "T").encode())
    for old, new in ADVISORY:
        data = data.replace(old, new)
    assert [r.outcome for r in import_messages(live_server.engine, data, "a.xml")] == ["stored"]
    sign_in(page, live_server, "watcher", PASSWORD)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/alerts")
    rows = page.locator("#alerts-table tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#alerts-table span.severity-severe")).to_have_text("Severe")
    page.get_by_label("Severity", exact=True).select_option("Minor")
    page.get_by_label("Sort", exact=True).select_option("event")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**/alerts?*severity=Minor*")
    assert "sort=event" in page.url
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Flood Advisory")
    expect(page.locator("#alerts-status")).to_have_text("1 active alert matches these filters")
    # A reload keeps the filters; the live refresh asks the API for the same filtered list.
    with page.expect_response(lambda r: "/api/alerts?" in r.url and "severity=Minor" in r.url):
        page.reload()
    expect(page.get_by_label("Severity", exact=True)).to_have_value("Minor")
    expect(page.get_by_label("Sort", exact=True)).to_have_value("event")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Flood Advisory")
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert wide is False, "the alert list scrolls sideways on a phone"
    page.get_by_role("link", name="Clear filters").click()
    page.wait_for_url("**/alerts")
    expect(rows).to_have_count(2)
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []
