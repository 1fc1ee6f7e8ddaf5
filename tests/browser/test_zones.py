"""The zone catalog page in a real browser: upload, reload, search and the zone code picker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import FilePayload, Locator, Page, expect

from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.support import SHARED_DATA

ZONES = SHARED_DATA / "zones"
LAND = ZONES / "z_18mr25.dbf"
MARINE = ZONES / "mz20fe25.dbf"
ADMIN_PASSWORD = "admin password for the browser"
VIEWER_PASSWORD = "viewer password for the browser"
ZONES_SHOT = Path("/tmp/zones.png")
PICKER_SHOT = Path("/tmp/picker.png")


@pytest.fixture
def zone_files() -> None:
    if not LAND.is_file() or not MARINE.is_file():
        pytest.skip(f"shared zone files not found under {ZONES}")


def upload(page: Page, file: Path | FilePayload) -> None:
    page.get_by_label("Zone DBF file").set_input_files(file)
    page.get_by_role("button", name="Upload and apply").click()


def family(page: Page, name: str, field: str) -> Locator:
    return page.locator(f'table[data-family="{name}"] [data-info="{field}"]')


def unexpected_console_errors(page_log: PageLog, *statuses: int) -> list[str]:
    return [
        text
        for text in page_log.console_errors()
        if not any(f"status of {status}" in text for status in statuses)
    ]


@pytest.mark.usefixtures("zone_files")
def test_admin_uploads_reloads_searches_and_picks_zones(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", ADMIN_PASSWORD)
    sign_in(page, live_server, "chief", ADMIN_PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_text("Station", exact=True).click()  # the menu that holds Zones
    nav.get_by_role("link", name="Zones").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Zone catalog")

    # Nothing loaded yet: the empty state says what to do, the search says the catalog is empty.
    empty = page.locator("#zone-info-empty")
    expect(empty).to_be_visible()
    expect(empty).to_contain_text("No zone catalog yet")
    expect(empty).to_contain_text("alertstation zones download")
    expect(page.locator("#zone-families")).to_be_hidden()
    expect(page.locator("#zone-results-empty")).to_contain_text("catalog is empty")
    page.evaluate("window.__samePage = true")

    # A file that is not a DBF is refused with the server's message; nothing changes.
    upload(page, FilePayload(name="z_01ja26.dbf", mimeType="application/octet-stream", buffer=b"x"))
    status = page.locator("#zone-admin-status")
    expect(status).to_contain_text("Upload failed")
    expect(status).to_have_class(re.compile(r"\berror\b"))
    expect(empty).to_be_visible()

    # The land file: the info panel updates in place (4,114 records, 4,026 zones).
    upload(page, LAND)
    expect(status).to_contain_text("Uploaded z_18mr25.dbf as the public file")
    expect(status.locator("li")).to_contain_text(["public: "])
    expect(family(page, "public", "database_rows")).to_have_text("4,026")
    expect(family(page, "public", "dbf_records")).to_have_text("4,114")
    expect(family(page, "public", "file_size")).to_have_text("1.4 MiB")
    expect(family(page, "public", "active_path")).to_contain_text("z_18mr25.dbf")
    expect(family(page, "public", "applied")).to_contain_text("z_18mr25.dbf at ")
    expect(family(page, "public", "state")).to_have_text("loaded")
    expect(empty).to_be_hidden()
    assert (live_server.settings.assets_dir / "z_18mr25.dbf").is_file()

    # The marine file, then a reload of everything from the assets directory.
    upload(page, MARINE)
    expect(status).to_contain_text("Uploaded mz20fe25.dbf as the marine file")
    expect(family(page, "marine", "database_rows")).to_have_text("565")
    expect(page.locator('[data-info="cache_size"]')).to_have_text("4,591")
    page.get_by_role("button", name="Reload from files").click()
    expect(status).to_contain_text("Reloaded the catalog")
    expect(status.locator("li")).to_have_count(2)
    expect(family(page, "marine", "cache_entries")).to_have_text("565")
    assert page.evaluate("window.__samePage") is True

    # Search by name with Enter; then by code prefix and type as one types (debounced).
    results = page.locator("#zone-results tbody tr")
    page.get_by_label("Code or name").fill("king george")
    page.get_by_label("Code or name").press("Enter")
    expect(results).to_have_count(1)
    expect(results.first).to_contain_text("VAZ057")
    expect(results.first).to_contain_text("King George")
    page.get_by_label("Code or name").fill("")
    page.get_by_label("Type").select_option("marine")
    page.get_by_label("Code or name").press_sequentially("gmz")
    expect(page.locator("#zone-search-summary")).to_contain_text("90 zones match")
    expect(results).to_have_count(25)
    expect(results.first).to_contain_text("GMZ")
    page.get_by_role("button", name="Next").click()
    expect(page.locator("#zone-page-label")).to_have_text("Page 2 of 4")
    expect(page.get_by_role("button", name="Previous")).to_be_enabled()
    page.get_by_label("Code or name").fill("no such place anywhere")
    expect(page.locator("#zone-results-empty")).to_contain_text("No zones match")
    page.get_by_label("Code or name").fill("")
    page.get_by_label("Type").select_option("")
    page.get_by_label("Code or name").press("Enter")
    expect(page.locator("#zone-search-summary")).to_contain_text("4,591 zones in the catalog")
    page.screenshot(path=str(ZONES_SHOT), full_page=True)

    # The picker: a land zone in Virginia and a marine zone in the Gulf land in the textarea.
    demo = page.locator("#zone-picker-demo")
    codes = demo.get_by_label("Zone codes")
    demo.get_by_role("button", name="Choose zones…").click()
    land_tab = demo.get_by_role("tab", name="Land")
    expect(land_tab).to_have_attribute("aria-selected", "true")
    virginia = demo.locator('details[data-key="VA"]')
    virginia.locator("summary").click()
    expect(virginia.get_by_text("Select all in VA")).to_be_visible()
    virginia.locator('input[value="VAZ057"]').check()
    expect(codes).to_have_value("VAZ057")
    expect(virginia.locator(".zp-chosen")).to_have_text("1 chosen")

    land_tab.focus()
    page.keyboard.press("ArrowLeft")  # wraps round to the last tab, Marine
    marine_tab = demo.get_by_role("tab", name="Marine")
    expect(marine_tab).to_be_focused()
    expect(marine_tab).to_have_attribute("aria-selected", "true")
    gulf = demo.locator('details[data-key="GM"]')
    expect(gulf.locator("summary")).to_contain_text("Gulf of America")
    expect(demo.locator('details[data-key="VA"]')).to_have_count(0)
    gulf.locator("summary").click()
    first_gulf = gulf.locator("input.zp-box").first
    gulf_code = first_gulf.get_attribute("value")
    assert gulf_code is not None and gulf_code.startswith("GMZ")
    first_gulf.check()
    expect(codes).to_have_value(f"VAZ057, {gulf_code}")
    expect(gulf.locator("input.zp-all-box")).to_have_js_property("indeterminate", True)
    demo.screenshot(path=str(PICKER_SHOT))

    # The filter narrows the tree; "select all" then takes only what is shown.
    demo.get_by_label("Filter").fill("lake superior")
    superior = demo.locator('details[data-key="LS"]')
    expect(superior).to_have_attribute("open", "")
    expect(demo.locator("details.zp-group")).to_have_count(1)
    demo.get_by_label("Filter").fill("")
    expect(demo.locator("details.zp-group")).to_have_count(15)

    # Typed codes round-trip: the picker follows the textarea, unknown codes are kept.
    codes.fill(f"{gulf_code}, va-057, TXZ999, nonsense")
    expect(first_gulf).to_be_checked()
    expect(demo.locator(".zp-count")).to_have_text("3 codes chosen")
    demo.get_by_role("button", name="Check codes").click()
    report = demo.locator(".zp-report")
    expect(report.locator(".zp-known")).to_contain_text("VAZ057 (King George)")
    expect(report.locator(".zp-unknown")).to_contain_text("TXZ999")
    expect(report.locator(".zp-invalid")).to_contain_text("nonsense")
    first_gulf.uncheck()
    expect(codes).to_have_value("va-057, TXZ999, nonsense")
    land_tab.click()
    expect(demo.locator('details[data-key="VA"] input[value="VAZ057"]')).to_be_checked()

    # Only the refused upload (422) failed on purpose; the CSP blocked nothing.
    assert unexpected_console_errors(page_log, 422) == []
    assert page_log.page_errors == []
    assert page_log.csp_violations() == []


def test_viewer_sees_the_catalog_but_cannot_change_it(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "watcher", "viewer", VIEWER_PASSWORD)
    sign_in(page, live_server, "watcher", VIEWER_PASSWORD)
    response = page.goto("/admin/zones")
    assert response is not None and response.status == 200
    expect(page.locator("#zone-info-empty")).to_be_visible()
    expect(page.get_by_label("Zone DBF file")).to_be_disabled()
    expect(page.get_by_role("button", name="Upload and apply")).to_be_disabled()
    expect(page.get_by_role("button", name="Reload from files")).to_be_disabled()
    expect(page.locator("#zone-admin-readonly")).to_contain_text("system.configure")

    # Looking still works: the picker opens on an empty catalog and checks codes.
    demo = page.locator("#zone-picker-demo")
    demo.get_by_role("button", name="Choose zones…").click()
    expect(demo.locator(".zp-status")).to_contain_text("No land zones in the catalog yet")
    demo.get_by_label("Zone codes").fill("VAZ057")
    demo.get_by_role("button", name="Check codes").click()
    expect(demo.locator(".zp-unknown")).to_contain_text("VAZ057")

    assert page_log.console_errors() == []
    assert page_log.page_errors == []
    assert page_log.csp_violations() == []
