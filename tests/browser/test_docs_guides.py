"""The operator guides in a real browser at phone width: each one reached from the index, read
without sideways scrolling, and the upgrade page's release notes rendered."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from alertstation.operations.public.guides import GuideLibrary
from alertstation.version import __version__
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "admin password for the guides"
_WIDE = "document.documentElement.scrollWidth > window.innerWidth"


def test_every_guide_reads_on_a_phone_from_the_index(page: Page, page_log: PageLog) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    guides = GuideLibrary().guides()
    page.goto("/docs")
    expect(page.locator("#guide-list a").first).to_have_text("Quick start")
    for guide in guides:
        page.goto("/docs")
        page.get_by_role("link", name=guide.title, exact=True).first.click()
        page.wait_for_url(f"**/docs/{guide.name}")
        expect(page.get_by_role("heading", level=1)).to_have_text(guide.title)
        assert page.evaluate(_WIDE) is False, f"{guide.name} scrolls sideways at 390 px"
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_upgrade_page_renders_the_release_notes(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/admin/operations/upgrade")
    notes = page.locator("#release-notes")
    # This version's section (or the next release's, while one is being prepared).
    expect(
        notes.get_by_role("heading", name=re.compile(rf"^(Unreleased|{re.escape(__version__)})"))
    ).to_be_visible()
    expect(notes.get_by_role("heading", name="To do when upgrading").first).to_be_visible()
    page.get_by_role("link", name="the upgrade guide").click()
    page.wait_for_url("**/docs/upgrade")
    assert page.evaluate(_WIDE) is False
    assert page_log.console_errors() == []
