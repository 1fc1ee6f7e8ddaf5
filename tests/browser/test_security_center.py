"""The Security Center in a real browser: tabs by mouse and keyboard, deep links, metrics, bans,
the lockout confirmation, the host firewall tab, and what a viewer may not do."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, expect

from alertstation.audit.actor import Actor
from alertstation.db.engine import begin_write
from alertstation.db.types import utcnow
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans import service
from alertstation.security.bans.entries import NewFilter
from alertstation.security.hostban import service as hs
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

ADMIN_PASSWORD = "admin password for security"
VIEWER_PASSWORD = "viewer password for security"


def seed(live_server: LiveServer, tmp_path: Path) -> None:
    """Failed sign-ins (4 from 2 addresses), 3 security events, 2 bans (one from SSH), and a
    mirror aimed at a fail2ban socket nobody listens on."""
    station = live_server.app.station
    for address, username, agent in (
        ("203.0.113.9", "root", "hydra"),
        ("203.0.113.9", "root", "hydra"),
        ("203.0.113.9", "admin", "hydra"),
        ("198.51.100.77", "bob", "Firefox"),
    ):
        station.ledger.record_now(
            live_server.engine,
            Actor(user_id=None, username=None, client_ip=address, user_agent=agent),
            "login failure",
            target=username,
            details={"username": username},
        )
    now = utcnow()
    with begin_write(live_server.engine) as conn:
        for minutes, address, kind, path in (
            (90, "203.0.113.9", "malicious_request", "/wp-login.php"),
            (60, "203.0.113.9", "flood", None),
            (5, "198.51.100.23", "api_abuse", "/api/alerts"),
        ):
            conn.execute(
                security_events.insert().values(
                    occurred_at=now - timedelta(minutes=minutes),
                    address=address,
                    kind=kind,
                    method="GET" if path else None,
                    path=path,
                )
            )
        for value, source in (("192.0.2.50", "ssh_brute_force"), ("198.51.100.99", "manual")):
            service.create_filter(
                conn,
                NewFilter(value=value, source=source, reason="seeded"),
                now=now,
                requester_ip="127.0.0.1",
            )
        hs.save_settings(
            conn,
            {
                "mirror_enabled": True,
                "socket_path": str(tmp_path / "f2b.sock"),
                "config_dir": str(tmp_path / "fail2ban"),
            },
            now,
        )


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def expect_tab(page: Page, name: str, panel: str) -> None:
    """The named tab is the selected one and only its panel shows."""
    tab = page.get_by_role("tab", name=name)
    expect(tab).to_have_attribute("aria-selected", "true")
    expect(tab).to_have_attribute("tabindex", "0")
    expect(page.locator(f"#panel-{panel}")).to_be_visible()
    expect(page.locator('[role="tabpanel"]:visible')).to_have_count(1)
    expect(page.locator('[role="tab"][aria-selected="true"]')).to_have_count(1)


def test_admin_switches_tabs_bans_and_confirms_a_lockout(
    page: Page, page_log: PageLog, live_server: LiveServer, tmp_path: Path
) -> None:
    create_user(live_server, "chief", "admin", ADMIN_PASSWORD)
    seed(live_server, tmp_path)
    sign_in(page, live_server, "chief", ADMIN_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Security").click()
    page.wait_for_url("**/security/center?tab=traffic")
    expect(page.get_by_role("heading", level=1)).to_have_text("Security Center")
    expect_tab(page, "Traffic", "traffic")

    # The tiles show the seeded numbers; the mirror cannot reach its daemon.
    expect(page.locator("#metric-failed-logins")).to_have_text("4")
    expect(page.locator("#metric-ips-banned")).to_have_text("2")
    expect(page.locator("#metric-active-bans")).to_have_text("2")
    expect(page.locator("#metric-ssh")).to_have_text("1")
    expect(page.locator("#metric-mirrored")).to_have_text("0")
    expect(page.locator("#metric-pending")).to_have_text("2")
    expect(page.locator("#tile-pending")).to_have_class("sc-tile sc-warn sc-bad")
    expect(page.locator("#status-gate")).to_contain_text("Enforcing 2 entries")
    expect(page.locator("#status-firewall")).to_contain_text("Error")

    # Traffic: one bar per hour, top addresses and recent events.
    expect(page.locator("#traffic-summary")).to_have_text(
        "3 security events from 2 addresses in the last 24 hours."
    )
    expect(page.locator("#traffic-chart svg g.sc-bar")).to_have_count(25)
    expect(page.locator("#traffic-chart svg rect.k-flood")).to_have_count(1)
    top = page.locator("#top-addresses tbody tr")
    expect(top).to_have_count(2)
    expect(top.first).to_contain_text("203.0.113.9")
    expect(top.first).to_contain_text("Malicious request 1")
    expect(page.locator("#recent-events tbody tr")).to_have_count(3)

    # Mouse: Malicious Logins, with the per-address counts.
    page.get_by_role("tab", name="Malicious Logins").click()
    expect_tab(page, "Malicious Logins", "malicious-logins")
    assert query(page)["tab"] == ["malicious-logins"]
    attacker = page.locator('#logins-by-address tr[data-address="203.0.113.9"]')
    expect(attacker).to_contain_text("root, admin")
    expect(attacker.locator("td").nth(2)).to_have_text("3")
    expect(page.locator("#logins-recent tbody tr")).to_have_count(4)

    # Keyboard: arrows move and wrap, Home and End jump; the URL follows.
    page.keyboard.press("ArrowRight")
    expect_tab(page, "Banned IPs", "banned-ips")
    expect(page.get_by_role("tab", name="Banned IPs")).to_be_focused()
    assert query(page)["tab"] == ["banned-ips"]
    page.keyboard.press("End")
    expect_tab(page, "Host Firewall", "host-firewall")
    page.keyboard.press("Home")
    expect_tab(page, "Traffic", "traffic")
    page.keyboard.press("ArrowLeft")
    expect_tab(page, "Host Firewall", "host-firewall")
    expect(page.get_by_role("tab", name="Host Firewall")).to_be_focused()

    # Host Firewall (admin): the daemon's own error is shown prominently; resync answers.
    expect(page.locator("#fw-service")).to_have_text("Not running")
    expect(page.locator("#fw-mirror")).to_contain_text("On")
    expect(page.locator("#firewall-error")).to_be_visible()
    expect(page.locator("#firewall-error")).to_contain_text("fail2ban reports:")
    page.get_by_role("button", name="Resync now").click()
    expect(page.locator("#firewall-status")).to_contain_text("Resynced: 0 mirrored, 2 pending")

    # Ban the attacker from the Malicious Logins tab.
    page.get_by_role("tab", name="Malicious Logins").click()
    attacker.get_by_role("button", name="Ban 203.0.113.9").click()
    dialog = page.locator("#ban-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Duration").select_option("60")
    dialog.get_by_role("button", name="Ban").click()
    expect(page.locator("#logins-action-status")).to_have_text("Banned 203.0.113.9.")
    expect(attacker).to_contain_text("Banned")
    expect(attacker.get_by_role("button", name="Ban 203.0.113.9")).to_have_count(0)
    expect(page.locator("#metric-active-bans")).to_have_text("3")

    # Banned IPs: add a ban through the form; it is listed.
    page.get_by_role("tab", name="Banned IPs").click()
    form = page.locator("#ban-form")
    blocklist = page.locator("#blocklist-table tbody tr")
    expect(blocklist).to_have_count(3)
    form.get_by_label("Address or CIDR range").fill("198.51.100.200")
    form.get_by_label("Reason").fill("port scan")
    form.get_by_role("button", name="Add entry").click()
    expect(page.locator("#filters-status")).to_have_text("Added 198.51.100.200 to the ban list.")
    added = page.locator('#blocklist-table tr[data-value="198.51.100.200"]')
    expect(added).to_contain_text("port scan")
    expect(added).to_contain_text("Manual")
    expect(added).to_contain_text("Enforced")
    expect(page.locator("#metric-active-bans")).to_have_text("4")

    # An allowlist entry that leaves out the browser's own address asks first.
    form.get_by_label("Address or CIDR range").fill("203.0.113.5")
    form.get_by_label("List").select_option("allowlist")
    form.get_by_role("button", name="Add entry").click()
    lockout = page.locator("#lockout-dialog")
    expect(lockout).to_be_visible()
    expect(lockout.locator("#lockout-message")).to_contain_text("127.0.0.1")
    expect(page.locator("#allowlist-table")).to_be_hidden()
    lockout.get_by_role("button", name="Do it anyway").click()
    expect(lockout).to_be_hidden()
    expect(page.locator("#filters-status")).to_have_text("Added 203.0.113.5 to the allowlist.")
    expect(page.locator('#allowlist-table tr[data-value="203.0.113.5"]')).to_be_visible()
    expect(page.locator("#allowlist-note")).to_contain_text("Login allowlist mode is on")
    expect(page.locator("#status-allowlist")).to_contain_text("On: only 1 listed address")

    # Every further allowlist change asks again; cancelling changes nothing.
    form.get_by_label("Address or CIDR range").fill("203.0.113.6")
    form.get_by_label("List").select_option("allowlist")
    form.get_by_role("button", name="Add entry").click()
    expect(lockout).to_be_visible()
    lockout.get_by_role("button", name="Cancel").click()
    expect(page.locator("#filters-status")).to_have_text("Nothing was added.")
    expect(page.locator("#allowlist-table tbody tr")).to_have_count(1)

    expect(page.locator("#overview-status")).to_have_text("")
    assert [e for e in page_log.console_errors() if "status of 409" not in e] == []
    assert page_log.page_errors == []
    assert page_log.csp_violations() == []


def test_viewer_deep_links_and_sees_no_controls(
    page: Page, page_log: PageLog, live_server: LiveServer, tmp_path: Path
) -> None:
    create_user(live_server, "watcher", "viewer", VIEWER_PASSWORD)
    seed(live_server, tmp_path)
    sign_in(page, live_server, "watcher", VIEWER_PASSWORD)

    page.goto("/security/center?tab=banned-ips")
    expect_tab(page, "Banned IPs", "banned-ips")
    rows = page.locator("#blocklist-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="192.0.2.50")).to_contain_text("SSH Brute Force")
    expect(page.locator("#ban-form")).to_have_count(0)
    expect(page.locator("#panel-banned-ips button")).to_have_count(0)
    expect(page.locator("#metric-failed-logins")).to_have_text("4")

    page.get_by_role("tab", name="Malicious Logins").click()
    expect(page.locator("#logins-by-address tbody tr")).to_have_count(2)
    expect(page.locator("#panel-malicious-logins button")).to_have_count(0)

    # The hash opens a tab too, and the page keeps the choice in the query string.
    page.goto("/security/center#host-firewall")
    expect_tab(page, "Host Firewall", "host-firewall")
    assert query(page)["tab"] == ["host-firewall"] and urlsplit(page.url).fragment == ""
    expect(page.locator("#firewall-admin-note")).to_be_visible()
    expect(page.locator("#firewall-summary")).to_contain_text("did not answer")
    expect(page.locator("#firewall-summary")).not_to_contain_text("f2b.sock")

    # A legacy address lands on its tab.
    page.goto("/security/malicious-logins")
    page.wait_for_url("**/security/center?tab=malicious-logins")
    expect_tab(page, "Malicious Logins", "malicious-logins")

    assert page_log.responses_under("/admin/hostban") == [], "never asks the admin-only route"
    assert page_log.console_errors() == []
    assert page_log.page_errors == []
    assert page_log.csp_violations() == []
