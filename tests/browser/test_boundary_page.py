"""The station boundary page in a real browser: upload a GeoJSON file, see it, switch matching."""

from __future__ import annotations

import orjson
from playwright.sync_api import FilePayload, Page, expect

from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "admin password for the boundary"
SQUARE = {
    "type": "Polygon",
    "coordinates": [[[-98.0, 35.0], [-97.0, 35.0], [-97.0, 36.0], [-98.0, 36.0], [-98.0, 35.0]]],
}


def test_upload_preview_and_match_polygons(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_text("Station", exact=True).click()
    nav.get_by_role("link", name="Boundary").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Station boundary")
    expect(page.locator("#boundary-empty")).to_be_visible()

    page.get_by_label("GeoJSON file", exact=False).set_input_files(
        FilePayload(
            name="Oklahoma City.geojson",
            mimeType="application/geo+json",
            buffer=orjson.dumps(SQUARE),
        )
    )
    page.get_by_role("button", name="Upload and re-evaluate alerts").click()
    expect(page.locator("#boundary-name")).to_have_text("Oklahoma City")
    preview = page.locator("#boundary-preview svg")
    expect(preview).to_be_visible()
    box = preview.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100

    checkbox = page.locator("#match-polygons")
    expect(checkbox).not_to_be_checked()
    checkbox.check()
    expect(page.locator("#boundary-status")).to_have_text("Polygon matching is on.")
    page.reload()
    expect(page.locator("#match-polygons")).to_be_checked()

    page.get_by_role("button", name="Recalculate intersections").click()
    expect(page.locator("#boundary-status")).to_contain_text("0 alerts checked")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Clear the boundary").click()
    expect(page.locator("#boundary-empty")).to_be_visible()
    assert page_log.console_errors() == [] and page_log.page_errors == []
    assert page_log.csp_violations() == []
