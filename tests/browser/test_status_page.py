"""The status page in a real browser: the source health table and "Poll all sources now"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from alertstation.alerts.poll.sources import create_source, read_config
from alertstation.alerts.service import set_alert_settings
from alertstation.db.engine import begin_write
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
PASSWORD = "status page password for the browser"


@pytest.fixture
def feed() -> Iterator[FeedServer]:
    with running_server() as server:
        server.serve(
            "/svr.xml",
            Canned((FIXTURES / "cap12_svr_new.xml").read_bytes(), content_type="application/xml"),
        )
        yield server


def test_poll_now_updates_the_health_table(
    page: Page, page_log: PageLog, live_server: LiveServer, feed: FeedServer
) -> None:
    with begin_write(live_server.engine) as conn:
        set_alert_settings(conn, zone_codes=["OKC109"])
        config = read_config(
            {"name": "Norman feed", "kind": "cap-xml", "url": feed.url("/svr.xml")}
        )
        create_source(conn, config, live_server.app.station.clock())
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Status").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Status")
    row = page.locator("#sources-table tbody tr", has_text="Norman feed")
    expect(row.locator(".badge")).to_have_text("pending")

    page.get_by_role("button", name="Poll all sources now").click()
    expect(page.locator("#poll-status")).to_contain_text("1 alert(s) stored, 0 failed")
    expect(row.locator(".badge")).to_have_text("healthy", timeout=10_000)  # after the reload
    expect(row).to_contain_text("200")
    assert [r.path for r in feed.seen()] == ["/svr.xml"]
    assert page_log.console_errors() == []
