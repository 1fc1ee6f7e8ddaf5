"""Pickers where a code is asked for: the weekly test's counties and the station time zone."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from alertstation.db.engine import begin_write
from alertstation.zones.tables import county_fips
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "operator password for the pickers"


def test_weekly_test_counties_are_picked_by_name_and_saved(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    with begin_write(live_server.engine) as conn:
        for fips, name in (("40109", "Oklahoma"), ("40027", "Cleveland")):
            conn.execute(
                county_fips.insert().values(
                    fips=fips, state_code="OK", county_name=name, cwa="OUN",
                    time_zone="C", fe_area="",
                )
            )  # fmt: skip
    live_server.app.station.zones.clear()
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/eas/forward")
    schedule = page.locator("#eas-rwt-form")
    codes = schedule.get_by_label("SAME location codes")

    schedule.get_by_label("State").select_option(label="Oklahoma (OK)")
    schedule.locator("#picker-counties").select_option(label="Cleveland (040027)")
    schedule.get_by_role("button", name="Add selected counties").click()
    expect(codes).to_have_value("040027")
    schedule.get_by_label("Counties (type to filter by name)").fill("okla")
    schedule.locator("#picker-counties").select_option(label="Oklahoma (040109)")
    schedule.get_by_role("button", name="Add selected counties").click()
    expect(codes).to_have_value("040027 040109")

    schedule.get_by_role("button", name="Save").click()
    expect(page.locator("#eas-rwt-status")).to_contain_text("location_codes")
    page.reload()
    expect(codes).to_have_value("040027 040109")
    assert page_log.page_errors == [] and page_log.console_errors() == []


def test_the_station_time_zone_is_chosen_from_a_list(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/admin/settings")
    zone = page.get_by_label("Station time zone")
    expect(zone).to_have_value("UTC")
    expect(zone.locator('optgroup[label="America"] option[value="America/Chicago"]')).to_have_text(
        "Chicago"
    )
    expect(zone.locator('option[value="US/Central"]')).to_have_count(0)  # no legacy aliases
    zone.select_option("America/Chicago")
    zone.locator("xpath=ancestor::form").get_by_role(
        "button", name="Save application settings"
    ).click()
    expect(page.locator("#settings-status")).to_contain_text("time_zone")
    page.reload()
    expect(page.get_by_label("Station time zone")).to_have_value("America/Chicago")
    assert page_log.page_errors == []
