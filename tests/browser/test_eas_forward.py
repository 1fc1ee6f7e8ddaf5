"""The auto-forward page in a real browser: save settings and the schedule, air a test."""

from __future__ import annotations

from datetime import UTC, datetime

from playwright.sync_api import Dialog, Page, expect

from alertstation.db.engine import begin_write
from alertstation.settings_admin import sections as store
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.eas.test_forward_support import archived, audit_rows

PASSWORD = "operator password for tests"


def now() -> datetime:
    return datetime.now(UTC)


def test_save_settings_schedule_and_air_a_test(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    with begin_write(live_server.engine) as conn:  # the weekly test airs by the station's zone
        store.save(
            conn, store.APPLICATION, {"time_zone": "America/Chicago"}, updated_by="t", now=now()
        )
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/eas/forward")
    expect(page.locator("#rwt-zone")).to_contain_text("America/Chicago")
    expect(page.get_by_role("heading", level=1)).to_have_text("Auto-forward and weekly test")
    expect(page.locator("#rwt-next")).to_contain_text("schedule is off")

    forward = page.locator("#eas-forward-form")
    forward.get_by_label("Station id").fill("wxyz/fm")
    forward.get_by_role("button", name="Save").click()
    expect(page.locator("#eas-forward-status")).to_have_text("Saved (station_id changed).")

    schedule = page.locator("#eas-rwt-form")
    schedule.get_by_label("Air the weekly test on schedule").check()
    schedule.get_by_label("Day").select_option("Friday")
    schedule.get_by_label("SAME location codes").fill("40109")
    schedule.get_by_role("button", name="Save").click()
    expect(page.locator("#eas-rwt-status")).to_contain_text("Not saved")
    expect(page.locator("#rwt-codes-error")).to_contain_text("location code 1")
    expect(schedule.get_by_label("SAME location codes")).to_be_focused()
    schedule.get_by_label("SAME location codes").fill("040109 040027")
    schedule.get_by_role("button", name="Save").click()
    expect(page.locator("#eas-rwt-status")).to_contain_text("Saved (")
    expect(page.locator("#rwt-next")).to_contain_text("America/Chicago")
    assert [row.target for row in audit_rows(live_server.engine, "config.updated")] == [
        "eas_forward",
        "eas_rwt",
    ]

    def accept(dialog: Dialog) -> None:
        dialog.accept()

    page.on("dialog", accept)
    page.get_by_role("button", name="Air a weekly test now").click()
    expect(page.locator("#eas-rwt-status")).to_contain_text(
        "Queued for air: ZCZC-EAS-RWT-040109-040027+0015-"
    )
    (row,) = archived(live_server.engine)
    assert row.aired_by == "ops"
    assert [e for e in page_log.console_errors() if "422" not in e] == []
    assert page_log.csp_violations() == []
