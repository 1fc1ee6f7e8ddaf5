"""The operations settings page in a real browser: each section saves, secrets stay hidden."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

ADMIN_PASSWORD = "admin password for the browser"
TOKEN = "monitor-token-from-the-browser"


def test_sections_save_and_reload(page: Page, page_log: PageLog, live_server: LiveServer) -> None:
    create_user(live_server, "chief", "admin", ADMIN_PASSWORD)
    sign_in(page, live_server, "chief", ADMIN_PASSWORD)
    page.goto("/admin/settings")
    expect(page.get_by_role("heading", level=1)).to_have_text("Settings")
    status = page.locator("#settings-status")

    hardware = page.locator('form[data-section="hardware"]')
    hardware.get_by_label("Transmitter relay GPIO pins").fill("17, 27")
    hardware.get_by_label("ALSA capture devices").fill("hw:1,0")
    hardware.get_by_role("button", name="Save hardware settings").click()
    expect(status).to_have_text("Saved (capture_devices, relay_pins changed).")

    application = page.locator('form[data-section="application"]')
    application.get_by_label("Minimum length").fill("16")
    application.get_by_role("button", name="Save application settings").click()
    expect(status).to_have_text("Saved (password_min_length changed).")

    feed = page.locator('form[data-section="decoder_feed"]')
    feed.get_by_label("Post decoded messages to a monitor").check()
    feed.get_by_label("Monitor address").fill("https://monitor.example/eas")
    feed.get_by_label("Monitor token").fill(TOKEN)
    feed.get_by_role("button", name="Save feed settings").click()
    expect(status).to_have_text("Saved (monitor_enabled, monitor_token, monitor_url changed).")
    expect(feed.get_by_label("Monitor token")).to_have_value("")

    # A bad value is refused with the server's message, and nothing is saved.
    tts = page.locator('form[data-section="tts"]')
    tts.get_by_label("espeak-ng voice").fill("--help")
    tts.get_by_role("button", name="Save text-to-speech settings").click()
    voice = tts.get_by_label("espeak-ng voice")
    expect(voice).to_have_attribute("aria-invalid", "true")
    expect(tts.locator(".field-error")).to_contain_text("an espeak-ng voice name such as en-us")
    expect(voice).to_be_focused()
    tts.get_by_label("espeak-ng voice").fill("en-us")

    page.reload()
    expect(hardware.get_by_label("Transmitter relay GPIO pins")).to_have_value("17, 27")
    expect(page.get_by_role("button", name="Test GPIO 27")).to_be_visible()
    expect(application.get_by_label("Minimum length")).to_have_value("16")
    expect(tts.get_by_label("espeak-ng voice")).to_have_value("en-us")
    expect(feed.get_by_label("Monitor token")).to_have_attribute(
        "placeholder", "(set; leave blank to keep)"
    )
    assert TOKEN not in page.content()

    tts.get_by_role("button", name="Preview").click()
    expect(status).to_have_text("Preview ready.")
    expect(page.locator("#tts-preview-audio")).to_be_visible()

    assert page_log.csp_violations() == []
    assert page_log.page_errors == []
    assert [text for text in page_log.console_errors() if "status of 422" not in text] == []
