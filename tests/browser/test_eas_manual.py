"""Manual EAS in a real browser: create an activation, preview it, send it, see the archive."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from alertstation.eas.airing import onair
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "operator password for tests"


def test_create_preview_send_and_archive(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    menu = page.get_by_role("navigation", name="Main")
    menu.get_by_text("EAS", exact=True).click()
    menu.get_by_role("link", name="Send a message").click()
    page.wait_for_url("**/eas/manual")
    expect(page.get_by_role("heading", level=1)).to_have_text("Manual EAS")

    # A code that is not PSSCCC is refused with the field named; nothing is created.
    page.locator("#eas-event").select_option("RWT")
    page.get_by_label("SAME location codes", exact=False).fill("51059")
    page.get_by_role("button", name="Create activation").click()
    expect(page.locator("#eas-status")).to_contain_text("location code 1")

    page.get_by_label("SAME location codes", exact=False).fill("051059 051107")
    page.get_by_role("button", name="Create activation").click()
    row = page.locator("#eas-activations tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("051059 051107")

    # The preview element loads the rendered WAV.
    audio = row.locator("audio.eas-preview")
    audio.evaluate("el => { el.preload = 'auto'; el.load(); }")
    page.wait_for_function(
        "el => el.readyState >= 1 && el.duration > 5", arg=audio.element_handle()
    )
    wav = [r for r in page_log.responses_under("/eas/manual/events/") if r.status == 200]
    assert wav and wav[-1].headers["content-type"] == "audio/wav"

    # No audio output is set up: the send dialog names what would air, says so, and offers
    # only "Archive only"; the result reads "archived only", never "aired".
    row.get_by_role("button", name="Send", exact=True).click()
    confirm = page.locator("#eas-confirm")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("Required Weekly Test")
    expect(confirm).to_contain_text("1 h")
    expect(page.locator("#eas-confirm-no-output")).to_have_text(
        "No audio output is set up; choose archive only to record it without airing."
    )
    expect(page.locator("#eas-confirm-air")).to_be_hidden()
    page.locator("#eas-confirm-archive").click()
    archived = page.locator("#eas-archive tbody tr")
    expect(archived).to_have_count(1)
    expect(archived).to_contain_text("ZCZC-EAS-RWT-051059-051107+0100-")
    expect(archived).to_contain_text("ops")
    expect(archived.locator("[data-message-state]")).to_have_attribute(
        "data-message-state", "queued"
    )
    expect(row.locator(".badge")).to_have_text("sent")
    # A sent activation offers Resend, not Send.
    expect(row.get_by_role("button", name="Send", exact=True)).to_have_count(0)
    expect(row.get_by_role("button", name="Resend", exact=True)).to_be_visible()
    assert onair.run_once(live_server.app.station)
    page.reload()
    expect(archived.locator("[data-message-state]")).to_have_text("archived only")

    # The only console error is the refused create (422) at the start.
    assert [e for e in page_log.console_errors() if "422" not in e] == []
    assert page_log.csp_violations() == []
