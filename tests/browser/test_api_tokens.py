"""API tokens in a real browser at phone width, by keyboard: make one, use it, revoke it."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.browser.accessibility import serious_violations
from tests.browser.conftest import PAGE_TIMEOUT_MS, LiveServer, create_user, sign_in

PASSWORD = "admin password for the token pages"


def _fits(page) -> bool:  # type: ignore[no-untyped-def]
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_make_use_and_revoke_a_token_by_keyboard_on_a_phone(
    browser: Browser, live_server: LiveServer
) -> None:
    create_user(live_server, "chief", "admin", PASSWORD)
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, has_touch=True
    )
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page = context.new_page()
        sign_in(page, live_server, "chief", PASSWORD)
        page.goto("/account")
        page.get_by_role("link", name="your API tokens").click()
        page.wait_for_url("**/account/tokens")
        assert _fits(page)
        assert serious_violations(page) == []

        # Keyboard only: name, the scopes (read is checked already), expiry, submit.
        page.get_by_label("Name (what uses it)").focus()
        page.keyboard.type("noc wall")
        page.keyboard.press("Tab")  # first scope: read
        expect(page.locator('input[name="scopes"][value="read"]')).to_be_focused()
        for _ in range(4):  # system.configure, system.manage_users, system.view_config, eas.
            page.keyboard.press("Tab")
        expect(page.locator('input[name="scopes"][value="eas.broadcast"]')).to_be_focused()
        page.keyboard.press("Space")
        page.get_by_label("Expires after (days; empty for never)").focus()
        page.keyboard.press("Enter")

        shown = page.locator("#new-token-value")
        expect(shown).to_be_focused()
        token = shown.input_value()
        assert token.startswith("ast_") and len(token) == 47
        expect(page.locator("#tokens-status")).to_contain_text("Copy it now")
        assert _fits(page)

        # The token works for a program, alone.
        seen = context.request.get(
            "/auth/session",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert seen.status == 200 and seen.json()["token"]["scopes"] == ["eas.broadcast", "read"]

        # Listed with its prefix only; revoke it by keyboard from the admin page.
        page.goto("/admin/tokens")
        row = page.locator("#tokens-table tbody tr", has_text="noc wall")
        expect(row).to_contain_text(token[:8])
        assert token not in page.content()
        assert serious_violations(page) == []
        page.on("dialog", lambda dialog: dialog.accept())
        row.get_by_role("button", name="Revoke noc wall").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#tokens-table tbody tr", has_text="noc wall")).to_contain_text(
            "revoked"
        )
        assert _fits(page)
        refused = context.request.get("/auth/session", headers={"Authorization": f"Bearer {token}"})
        assert refused.status == 401
    finally:
        context.close()
