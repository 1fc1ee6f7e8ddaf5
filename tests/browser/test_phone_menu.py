"""The navigation on a phone: one Menu button in the header opens the links and Sign out."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, create_user, sign_in

PASSWORD = "a long password for the phone menu"


def test_menu_button_opens_and_escape_closes_the_navigation(
    page: Page, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/status")
    toggle = page.get_by_role("banner").get_by_role("button", name="Menu")
    nav = page.get_by_role("navigation", name="Main")
    sign_out = page.get_by_role("button", name="Sign out")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_have_attribute("aria-controls", "site-menu")
    expect(nav).to_be_hidden()
    expect(sign_out).to_be_hidden()

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Status")).to_have_attribute("aria-current", "page")
    expect(sign_out).to_be_visible()
    admin = nav.locator("summary", has_text="Admin")
    admin.click()
    expect(nav.get_by_role("link", name="Users")).to_be_visible()
    page.keyboard.press("Escape")  # the open group closes first, the menu stays open
    expect(nav.get_by_role("link", name="Users")).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()
    expect(nav).to_be_hidden()

    page.set_viewport_size({"width": 1366, "height": 900})  # a desktop: the bar, no button
    expect(toggle).to_be_hidden()
    expect(nav.get_by_role("link", name="Status")).to_be_visible()
    expect(sign_out).to_be_visible()
