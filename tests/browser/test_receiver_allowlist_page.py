"""The receiver programs page: an admin edits the allowlist one program per line, with errors
beside the field; an operator reads it and is told only an administrator may change it."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from alertstation.settings import ENV_FILE, read_env_file
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "password for the receiver programs page"
NAME = "ALERTSTATION_RECEIVER_ALLOWLIST"


def test_an_admin_edits_the_allowlist_and_an_operator_only_reads_it(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/admin/receiver_allowlist")
    expect(page.locator("#allowlist-in-effect-empty")).to_be_visible()
    entries = page.get_by_label("Allowed programs, one per line")

    entries.fill("/usr/bin/arecord\nbin/rx --band noaa")
    page.locator("#allowlist-save").click()
    expect(page.locator("#allowlist-entries-error")).to_have_text(
        re.compile(r"^Allowed programs: 'bin/rx' is not an absolute program path")
    )
    expect(entries).to_have_attribute("aria-invalid", "true")
    expect(entries).to_have_attribute("aria-describedby", "allowlist-entries-error allowlist-hint")
    expect(entries).to_be_focused()
    env_file = live_server.settings.data_dir / ENV_FILE
    assert not env_file.exists()

    entries.fill("/usr/bin/arecord\n/opt/rx/bin/rx --band noaa\n")
    page.locator("#allowlist-save").click()
    expect(page.locator("#allowlist-status")).to_have_text(
        "Saved. Restart the station to apply it."
    )
    expect(entries).not_to_have_attribute("aria-invalid", "true")
    assert read_env_file(env_file)[NAME] == "/usr/bin/arecord, /opt/rx/bin/rx --band noaa"
    page.reload()
    expect(entries).to_have_value("/usr/bin/arecord\n/opt/rx/bin/rx --band noaa")

    page.context.clear_cookies()
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/admin/receiver_allowlist")
    expect(page.locator("#allowlist-admin-only")).to_have_text(
        re.compile("^Only an administrator can change")
    )
    expect(page.locator("#allowlist-form")).to_have_count(0)
    expect(page.get_by_text("/opt/rx/bin/rx --band noaa")).to_be_visible()
    assert page_log.page_errors == [] and page_log.csp_violations() == []
