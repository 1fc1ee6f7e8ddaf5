"""The client beacon: every HTML page, the sign-in page included, reports the screen resolution
once per browser-tab session, and the station records it on the rows of that visitor."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Request
from sqlalchemy import select

from alertstation.db.engine import begin_write
from alertstation.traffic.settings import save_settings, settings_cache_for
from alertstation.traffic.tables import web_request_logs
from tests.browser.conftest import PAGE_TIMEOUT_MS, LiveServer

DEADLINE_S = 20.0  # generous: the machine running CI is loaded


@pytest.fixture
def context(browser: Browser, live_server: LiveServer) -> Iterator[BrowserContext]:
    """A browser with a 1366 x 900 screen; loopback visits recorded (they are not by default)."""
    with begin_write(live_server.engine) as conn:
        save_settings(conn, {"exclude_internal": False}, live_server.app.station.clock())
    settings_cache_for(live_server.engine).clear()
    made = browser.new_context(
        base_url=live_server.url,
        screen={"width": 1366, "height": 900},
        viewport={"width": 1366, "height": 800},
    )
    made.set_default_timeout(PAGE_TIMEOUT_MS)
    yield made
    made.close()


def _beacons(sent: list[Request]) -> list[str]:
    return [
        parse_qs(urlsplit(r.url).query)["screen"][0]
        for r in sent
        if urlsplit(r.url).path == "/api/traffic/client"
    ]


def test_each_tab_sends_the_beacon_once_from_the_sign_in_page_on(
    context: BrowserContext, live_server: LiveServer
) -> None:
    sent: list[Request] = []
    context.on("request", lambda request: sent.append(request))
    tab = context.new_page()
    with tab.expect_response(lambda r: urlsplit(r.url).path == "/api/traffic/client") as answer:
        tab.goto("/login")
    assert answer.value.status == 204
    assert _beacons(sent) == ["1366x900"]

    tab.goto("/docs")
    tab.reload()
    tab.goto("/login")
    tab.wait_for_load_state("networkidle")
    assert _beacons(sent) == ["1366x900"], "once per tab session, not once per page"
    assert tab.evaluate("window.sessionStorage.getItem('alertstation.beacon')") == "sent"

    other = context.new_page()  # a new tab is a new session
    with other.expect_response(lambda r: urlsplit(r.url).path == "/api/traffic/client"):
        other.goto("/docs")
    assert _beacons(sent) == ["1366x900", "1366x900"]

    # The sign-in page's row carries the resolution (recorded by the first beacon).
    query = select(web_request_logs.c.screen_resolution).where(web_request_logs.c.path == "/login")
    deadline = time.monotonic() + DEADLINE_S
    while True:
        with live_server.engine.connect() as conn:
            found = [row[0] for row in conn.execute(query)]
        if "1366x900" in found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert "1366x900" in found, found
