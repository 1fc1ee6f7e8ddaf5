"""The users, account and notifications forms in Chromium, on both backends: bad values are
refused with every error at once, each beside its field in words, marked aria-invalid and
described by its message, with focus on the first; a good value then goes through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlalchemy import select

from alertstation.app import create_app
from alertstation.audit.tables import audit_logs
from alertstation.auth import service as auth_service
from alertstation.db.engine import make_engine
from alertstation.db.migrate import upgrade_to_head
from tests.browser.conftest import LiveServer, create_user, serve_in_thread, sign_in
from tests.support import BACKENDS, create_database, drop_database, make_settings

PASSWORD = "admin password for the forms"


@pytest.fixture(params=BACKENDS)
def live_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """The app on a fresh database of each backend (these form walks write SQL)."""
    url = create_database(request.param, tmp_path)
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
        settings = make_settings(tmp_path, url)
        app = create_app(settings, engine=engine)
        errors: list[BaseException] = []
        with serve_in_thread(app, errors) as base_url:
            yield LiveServer(base_url, engine, settings, app, errors)
        if errors:
            pytest.fail(f"the live server raised: {errors!r}")
    finally:
        engine.dispose()
        drop_database(url)


def expect_error_beside(field: Locator, text: str) -> None:
    """The field is marked invalid, its message follows it and is the first it is described by."""
    expect(field).to_have_attribute("aria-invalid", "true")
    field_id = field.get_attribute("id")
    message = field.page.locator(f"#{field_id}-error")
    expect(message).to_contain_text(text)
    assert field.get_attribute("aria-describedby").split()[0] == f"{field_id}-error"
    follows = field.evaluate(
        "(el) => { const next = el.nextElementSibling; return next ? next.id : null; }"
    )
    assert follows == f"{field_id}-error", f"the message of #{field_id} is not beside it"


def is_focused(field: Locator) -> bool:
    return bool(field.evaluate("(el) => document.activeElement === el"))


def test_the_users_forms_place_every_error_beside_its_field(
    page: Page, live_server: LiveServer
) -> None:
    chief = create_user(live_server, "chief", "admin", PASSWORD)
    ops = create_user(live_server, "ops", "operator", "operator password 1234")
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/admin/users")

    # Add a user: a bad name and a short password, both refused at once, in words.
    page.locator("#new-username").fill("x")
    page.locator("#new-password").fill("short")
    page.get_by_role("button", name="Add user").click()
    username, password = page.locator("#new-username"), page.locator("#new-password")
    expect_error_beside(username, "Username must be 2-64 characters")
    expect_error_beside(password, "Password must be at least 12 characters")
    assert is_focused(username)
    # The hint stays among what describes the field, after the message.
    assert "new-username-hint" in username.get_attribute("aria-describedby")
    # Fixed, the same form adds the user and the marks go.
    username.fill("watcher")
    password.fill("viewer password 123")
    page.get_by_role("button", name="Add user").click()
    expect(page.locator('tr[data-username="watcher"]')).to_be_visible()

    # Demoting the last admin: refused beside that row's role select, which keeps its value.
    role = page.locator(f"#role-{chief.id}")
    role.select_option("operator")
    expect_error_beside(role, "last enabled admin")
    expect(role).to_have_value("admin")

    # Disabling the last admin: refused in that row's form, focus on the message.
    row_form = page.locator(f"#user-{chief.id}")
    row_form.get_by_role("button", name="Disable").click()
    summary = row_form.locator("[data-form-summary]")
    expect(summary).to_contain_text("last enabled admin")
    expect(summary).to_be_focused()

    # Reset another user's password: too short, refused beside the field; then set.
    page.locator('tr[data-username="ops"] summary:has-text("Reset password")').click()
    new_password = page.locator(f"#password-{ops.id}")
    new_password.fill("short")
    page.locator(f"#user-{ops.id}-password").get_by_role("button", name="Set password").click()
    expect_error_beside(new_password, "New password must be at least 12 characters")
    assert is_focused(new_password)
    new_password.fill("a brand new operator password")
    page.locator(f"#user-{ops.id}-password").get_by_role("button", name="Set password").click()
    expect(page.locator("#users-status")).to_contain_text("Password set")
    expect(new_password).not_to_have_attribute("aria-invalid", "true")
    with live_server.engine.connect() as conn:
        assert auth_service.authenticate(conn, "ops", "a brand new operator password")
        fields = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.target == "user:ops")
            .order_by(audit_logs.c.id.desc())
        ).scalar()
    assert '"password"' in fields and "a brand new" not in fields


def test_the_account_form_shows_both_password_errors_at_once(
    page: Page, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/account")
    current, new = page.locator("#current_password"), page.locator("#new_password")
    current.fill("not my password at all")
    new.fill("short")
    page.get_by_role("button", name="Change password").click()
    expect_error_beside(current, "the current password is not correct")
    expect_error_beside(new, "New password must be at least 12 characters")
    assert is_focused(current)

    current.fill(PASSWORD)
    new.fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect_error_beside(new, "must differ from the current one")
    expect(current).not_to_have_attribute("aria-invalid", "true")

    new.fill("another admin password 42")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("#password-form .status")).to_have_text("Password changed.")
    expect(new).not_to_have_attribute("aria-invalid", "true")


def test_the_channel_form_places_name_and_url_errors(page: Page, live_server: LiveServer) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/notifications")
    name, url = page.locator("#channel-name"), page.locator("#channel-url")
    url.fill("no scheme here")
    page.get_by_role("button", name="Add channel").click()
    expect_error_beside(name, "Name: 1-80 characters")
    expect_error_beside(url, "Apprise URL: an apprise URL")
    assert is_focused(name)
    # The secret is not echoed back in the message.
    expect(page.locator("#channel-url-error")).not_to_contain_text("no scheme here")

    name.fill("Duty phone")
    url.fill("json://127.0.0.1:9/hook")
    page.get_by_label("Alert in area").check()
    page.get_by_role("button", name="Add channel").click()
    expect(page.locator("#channels-table")).to_contain_text("Duty phone")
