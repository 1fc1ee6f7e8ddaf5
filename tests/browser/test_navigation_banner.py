"""The grouped navigation fits on one line at 1280 px, and every page shows the broadcast banner.

The banner polls /api/broadcast/state about every 1.5 s and stops while the tab is hidden.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Page, Request, expect

from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "admin password for the navigation"
PAGES = (
    "/",
    "/alerts",
    "/eas/manual",
    "/eas/forward",
    "/admin/zones",
    "/admin/location_settings",
    "/admin/environment",
    "/status",
    "/security/center",
    "/admin/users",
    "/admin/sessions",
    "/logs",
    "/docs",
    "/docs/stop-a-message",
    "/docs/search?q=stop",
    "/support",
    "/repo-stats",
)

# Every entry of the bar, its top and bottom, and whether the bar overflows its width.
_BAR_GEOMETRY = """() => {
  const bar = document.querySelector("header.topbar");
  const boxes = [bar.querySelector(".brand"), ...bar.querySelectorAll(".nav > li"),
                 bar.querySelector(".account")].map((el) => el.getBoundingClientRect());
  return {
    tops: boxes.map((b) => Math.round(b.top)), bottoms: boxes.map((b) => Math.round(b.bottom)),
    overflow: bar.scrollWidth > bar.clientWidth, entries: boxes.length,
    right: Math.max(...boxes.map((b) => b.right)), width: document.documentElement.clientWidth,
  };
}"""

_HIDE_TAB = """() => {
  Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""

_SHOW_TAB = """() => {
  Object.defineProperty(document, "visibilityState", { value: "visible", configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def _is_state_poll(request: Request) -> bool:
    return urlsplit(request.url).path == "/api/broadcast/state"


def test_admin_navigation_fits_one_line_and_every_page_has_the_banner(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    create_user(live_server, "station-admin", "admin", PASSWORD)
    sign_in(page, live_server, "station-admin", PASSWORD)
    for path in PAGES:
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        bar = page.evaluate(_BAR_GEOMETRY)
        assert bar["entries"] >= 9, (path, bar)
        assert not bar["overflow"] and bar["right"] <= bar["width"], (path, bar)
        # One line: every entry overlaps the first one vertically.
        assert max(bar["tops"]) < min(bar["bottoms"]), (path, bar)
        banner = page.locator("#broadcast-banner")
        expect(banner).to_be_visible()
        expect(banner).to_have_attribute("data-state", "idle")
        expect(banner).to_contain_text("No active alerts")
    assert page_log.page_errors == []


def test_menus_open_show_their_pages_and_mark_the_current_one(
    page: Page, live_server: LiveServer
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    create_user(live_server, "station-admin", "admin", PASSWORD)
    sign_in(page, live_server, "station-admin", PASSWORD)
    page.goto("/admin/users")
    nav = page.get_by_role("navigation", name="Main")
    users = nav.get_by_role("link", name="Users")
    expect(users).to_be_hidden()
    nav.get_by_text("Admin", exact=True).click()
    expect(users).to_be_visible()
    expect(users).to_have_attribute("aria-current", "page")
    nav.get_by_text("Station", exact=True).click()  # one menu open at a time
    expect(users).to_be_hidden()
    expect(nav.get_by_role("link", name="Zones")).to_be_visible()
    page.keyboard.press("Escape")
    expect(nav.get_by_role("link", name="Zones")).to_be_hidden()


def test_a_signed_out_visitor_sees_public_links_and_no_menu(page: Page) -> None:
    page.goto("/docs")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.locator("details")).to_have_count(0)
    expect(nav.get_by_role("link", name="Docs")).to_have_attribute("aria-current", "page")
    expect(page.locator("#broadcast-banner")).to_be_visible()


def test_banner_polls_about_every_one_and_a_half_seconds_and_stops_while_hidden(
    page: Page, page_log: PageLog
) -> None:
    page.goto("/docs")
    # Two polls after the first: the banner keeps polling on its own.
    for _ in range(2):
        with page.expect_request(_is_state_poll, timeout=60_000):
            pass
    expect(page.locator("#broadcast-banner")).to_have_attribute("data-polling", "on")

    page.evaluate(_HIDE_TAB)
    expect(page.locator("#broadcast-banner")).to_have_attribute("data-polling", "off")
    page.wait_for_load_state("networkidle")
    polls_hidden = len([r for r in page_log.responses if _is_state_poll(r.request)])
    # Longer than two intervals: a poller that kept going would have asked again by now.
    page.wait_for_timeout(4_000)
    assert len([r for r in page_log.responses if _is_state_poll(r.request)]) == polls_hidden

    with page.expect_request(_is_state_poll, timeout=60_000):
        page.evaluate(_SHOW_TAB)
    expect(page.locator("#broadcast-banner")).to_have_attribute("data-polling", "on")
