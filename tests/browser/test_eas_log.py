"""The station log page in a real browser: an operator records a missed test's reason and a
review through the page's forms (JSON with the CSRF token), sees them listed, and axe-core finds
nothing to fix at a phone's width."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "operator password for tests"


def test_an_operator_adds_a_note_and_a_review_from_the_page(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "operator", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/eas/log?topic=missed_test&note_source=audio:1#note-heading")
    expect(page.get_by_label("About")).to_have_value("missed_test")
    page.get_by_label("Note", exact=True).fill("No RWT from the state relay this week")
    page.get_by_role("button", name="Add note").click()
    table = page.locator("#eas-log")
    expect(table).to_contain_text("Required test not received: No RWT from the state relay")
    expect(table).to_contain_text("audio:1")

    page.get_by_role("button", name="Record my review").click()
    expect(page.locator("ul[aria-labelledby=reviews-heading]")).to_contain_text("Reviewed by chief")
    assert axe_violations(page) == []
    assert page_log.console_errors() == [] and page_log.csp_violations() == []
