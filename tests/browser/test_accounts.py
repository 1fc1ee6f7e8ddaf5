"""Accounts in a real browser: sign in, manage users, end another session, see the audit rows."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

ADMIN_PASSWORD = "admin password for the browser"
OPS_PASSWORD = "operator password for tests"


def test_sign_in_manage_users_terminate_a_session_and_see_the_audit_rows(
    page: Page, page_log: PageLog, browser: Browser, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", ADMIN_PASSWORD)
    create_user(live_server, "ops", "operator", OPS_PASSWORD)

    # The operator signs in from a second, independent browser context.
    other = browser.new_context(base_url=live_server.url)
    try:
        ops_page = other.new_page()
        sign_in(ops_page, live_server, "ops", OPS_PASSWORD)
        expect(ops_page.get_by_role("heading", level=1)).to_have_text("Station overview")

        # A wrong password keeps the admin on the form with a message.
        sign_in(page, live_server, "chief", "not the password", expect_success=False)
        expect(page.get_by_role("alert")).to_contain_text("wrong password")

        # Sign in and land where we were going.
        page.goto("/admin/users")
        assert urlsplit(page.url).path == "/login"
        page.get_by_label("Username").fill("chief")
        page.get_by_label("Password").fill(ADMIN_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/admin/users")
        nav = page.get_by_role("navigation", name="Main")
        expect(nav.locator('a[href="/admin/users"]')).to_have_attribute("aria-current", "page")

        # Add a viewer through the form.
        page.get_by_label("Username", exact=True).fill("watcher")
        page.get_by_label("Password (at least 12 characters)").fill("viewer password 123")
        page.locator("#new-role").select_option("viewer")
        page.get_by_role("button", name="Add user").click()
        expect(page.locator('tr[data-username="watcher"]')).to_be_visible()
        expect(page.locator('tr[data-username="watcher"] select')).to_have_value("viewer")

        # The last admin cannot be demoted: the page says so beside the role and keeps it.
        page.locator('tr[data-username="chief"] select').select_option("operator")
        expect(page.locator('tr[data-username="chief"] .field-error')).to_contain_text(
            "last enabled admin"
        )
        expect(page.locator('tr[data-username="chief"] select')).to_have_value("admin")

        # End the operator's session from the sessions page.
        nav.get_by_text("Admin", exact=True).click()  # the menu that holds Sessions
        page.get_by_role("link", name="Sessions").click()
        rows = page.locator("#sessions-table tbody tr")
        expect(rows).to_have_count(2)
        ops_row = rows.filter(has_text="ops")
        expect(ops_row).to_contain_text("127.0.0.1")
        ops_row.get_by_role("button", name="Terminate").click()
        expect(page.locator("#sessions-status")).to_contain_text("Session ended")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("this session")

        # The operator's next request finds the session gone.
        ops_page.goto("/")
        assert urlsplit(ops_page.url).path == "/login"
    finally:
        other.close()

    # The audit log shows the termination, the sign-ins and the failed attempt.
    page.get_by_role("navigation", name="Main").get_by_text("Station", exact=True).click()
    page.get_by_role("link", name="Logs").click()
    table = page.locator("#audit-table")
    expect(table).to_contain_text("session.terminated")
    expect(table).to_contain_text("login success")
    expect(table).to_contain_text("login failure")
    expect(table).to_contain_text("user.created")
    page.locator("#log-action").select_option("login failure")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#audit-table tbody tr")).to_have_count(1)

    # Sign out from the header.
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    page.goto("/admin/users")
    assert urlsplit(page.url).path == "/login"
    # The refused password (401) and the refused demotion (409) are the only failed loads.
    unexpected = [
        e
        for e in page_log.console_errors()
        if not any(f"status of {code}" in e for code in (401, 409))
    ]
    assert unexpected == []


def test_viewer_sees_no_admin_navigation_and_gets_403_on_admin_pages(
    page: Page, live_server: LiveServer
) -> None:
    create_user(live_server, "watcher", "viewer", "viewer password 123")
    sign_in(page, live_server, "watcher", "viewer password 123")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_text("Admin", exact=True)).to_have_count(0)
    nav.get_by_text("Station", exact=True).click()
    expect(nav.get_by_role("link", name="Logs")).to_be_visible()
    expect(nav.locator('a[href="/admin/users"]')).to_have_count(0)
    response = page.goto("/admin/users")
    assert response is not None and response.status == 403
    expect(page.locator(".error-page")).to_have_attribute("data-code", "forbidden")


def test_changing_own_password(page: Page, live_server: LiveServer) -> None:
    create_user(live_server, "ops", "operator", OPS_PASSWORD)
    sign_in(page, live_server, "ops", OPS_PASSWORD)
    page.get_by_role("link", name="ops (operator)").click()
    page.get_by_label("Current password").fill("wrong password entirely")
    page.get_by_label("New password (at least 12 characters)").fill("a newer password here")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#current_password-error")).to_contain_text("not correct")
    page.get_by_label("Current password").fill(OPS_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#password-form .status")).to_contain_text("Password changed")
