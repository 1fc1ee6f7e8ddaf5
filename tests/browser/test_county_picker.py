"""The Manual EAS county picker: a state, its counties by name, a part, or the whole state."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from alertstation.db.engine import begin_write
from alertstation.zones.tables import county_fips
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "operator password for the picker"


def test_pick_counties_parts_and_a_whole_state(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    with begin_write(live_server.engine) as conn:
        for fips, name in (("39085", "Lake"), ("39049", "Franklin"), ("39055", "Geauga")):
            conn.execute(
                county_fips.insert().values(
                    fips=fips,
                    state_code="OH",
                    county_name=name,
                    cwa="CLE",
                    time_zone="E",
                    fe_area="",
                )
            )
    live_server.app.station.zones.clear()
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/eas/manual")
    field = page.locator("#eas-locations")

    page.get_by_label("State").select_option(label="Ohio (OH)")
    counties = page.locator("#picker-counties")
    expect(counties.locator("option")).to_have_count(3)
    expect(counties.locator("option").first).to_have_text("Franklin (039049)")

    page.get_by_label("Counties (type to filter by name)").fill("lak")
    expect(counties.locator("option:not([hidden])")).to_have_count(1)
    counties.select_option(label="Lake (039085)")
    page.get_by_role("button", name="Add selected counties").click()
    expect(field).to_have_value("039085")

    page.get_by_label("Part of the county").select_option("2")
    page.get_by_role("button", name="Add selected counties").click()
    expect(field).to_have_value("039085 239085")
    page.get_by_role("button", name="Add selected counties").click()  # never twice
    expect(field).to_have_value("039085 239085")
    expect(page.locator("#picker-status")).to_contain_text("Nothing new to add")

    page.get_by_role("button", name="Add the whole state").click()
    expect(field).to_have_value("039085 239085 039000")

    # A state without counties in the table still offers the whole state.
    page.get_by_label("State").select_option(label="Wyoming (WY)")
    expect(page.locator("#picker-status")).to_contain_text("partial-counties file")
    expect(page.get_by_role("button", name="Add selected counties")).to_be_disabled()
    page.get_by_role("button", name="Add the whole state").click()
    expect(field).to_have_value("039085 239085 039000 056000")
    assert page_log.console_errors() == [] and page_log.page_errors == []
