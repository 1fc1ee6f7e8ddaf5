"""The alert feeds page in Chromium, on both backends: a feed against a loopback CAP server whose
alert then shows in the alert list, every form error at once beside its field, enable, disable,
edit and remove with their audit rows, and a CAP file imported by upload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from alertstation.alerts.service import set_alert_settings
from alertstation.app import create_app
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write, make_engine
from alertstation.db.migrate import upgrade_to_head
from tests.alerts.feed_server import Canned, FeedServer, running_server
from tests.browser.conftest import LiveServer, create_user, serve_in_thread, sign_in
from tests.support import BACKENDS, create_database, drop_database, make_settings

PASSWORD = "operator password for the feeds"
AREA = "040109"


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


@pytest.fixture
def cap_server() -> Iterator[FeedServer]:
    with running_server() as server:
        yield server


def cap_message(identifier: str, headline: str, now: datetime) -> bytes:
    """A hand-made CAP 1.2 warning, current for two hours, for SAME code ``AREA``."""

    def stamp(value: datetime) -> str:
        return value.strftime("%Y-%m-%dT%H:%M:%S+00:00")

    return f"""<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">
  <identifier>{identifier}</identifier>
  <sender>w-nws.webmaster@noaa.gov</sender>
  <sent>{stamp(now - timedelta(minutes=5))}</sent>
  <status>Actual</status>
  <msgType>Alert</msgType>
  <scope>Public</scope>
  <info>
    <category>Met</category>
    <event>Severe Thunderstorm Warning</event>
    <urgency>Immediate</urgency>
    <severity>Severe</severity>
    <certainty>Observed</certainty>
    <eventCode><valueName>SAME</valueName><value>SVR</value></eventCode>
    <effective>{stamp(now - timedelta(minutes=5))}</effective>
    <expires>{stamp(now + timedelta(hours=2))}</expires>
    <senderName>NWS Norman OK</senderName>
    <headline>{headline}</headline>
    <description>A severe thunderstorm was near Kingfisher.</description>
    <area>
      <areaDesc>Oklahoma, OK</areaDesc>
      <geocode><valueName>SAME</valueName><value>{AREA}</value></geocode>
    </area>
  </info>
</alert>
""".encode()


def poller_audit(live_server: LiveServer) -> list[str]:
    with live_server.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.target == "poller")
            .order_by(audit_logs.c.id)
        ).all()
    return [row.details for row in rows]


def admin_on_feeds(page: Page, live_server: LiveServer) -> None:
    with begin_write(live_server.engine) as conn:
        set_alert_settings(conn, zone_codes=[AREA])
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/admin/poller")


def accept_dialogs(page: Page) -> None:
    page.on("dialog", lambda dialog: dialog.accept())


def test_add_a_feed_see_its_alerts_then_disable_edit_and_remove_it(
    page: Page, live_server: LiveServer, cap_server: FeedServer
) -> None:
    now = datetime.now(UTC)
    headline = "Severe Thunderstorm Warning for Oklahoma County from the loopback feed"
    cap_server.serve(
        "/cap.xml",
        Canned(
            cap_message("urn:test:feeds:1", headline, now),
            content_type="application/cap+xml",
            etag='"v1"',
        ),
    )
    admin_on_feeds(page, live_server)
    accept_dialogs(page)
    expect(page.locator("#feeds-empty")).to_be_visible()
    form = page.locator("#feed-form")

    # Every error at once, beside its field, in words; focus on the first.
    form.locator("#feed-kind").select_option("cap-xml")
    form.locator("#feed-url").fill("ftp://127.0.0.1/cap.xml")
    form.locator("#feed-interval").fill("5")
    form.locator("#feed-save").click()
    name, url, interval = (form.locator(s) for s in ("#feed-name", "#feed-url", "#feed-interval"))
    for field in (name, url, interval):
        expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#feed-name-error")).to_have_text(re.compile(r"^Feed name must be"))
    expect(page.locator("#feed-url-error")).to_contain_text("Feed address must start with http")
    expect(page.locator("#feed-interval-error")).to_contain_text("Poll every (seconds) must be")
    expect(url).to_have_attribute("aria-describedby", re.compile(r"^feed-url-error\b"))
    expect(name).to_be_focused()
    assert poller_audit(live_server) == []

    name.fill("Loopback CAP")
    url.fill(cap_server.url("/cap.xml"))
    interval.fill("60")
    form.locator("#feed-save").click()
    expect(page.locator("#feeds-status")).to_have_text("Added the feed Loopback CAP.")
    row = page.locator("#feeds-table tbody tr", has_text="Loopback CAP")
    expect(row.locator(".feed-last-poll")).to_contain_text("never")
    expect(row.locator(".feed-etag")).to_have_text("No ETag")

    page.locator("#feeds-poll-now").click()
    expect(page.locator("#feeds-status")).to_contain_text("1 alert(s) stored")
    expect(row.locator(".feed-last-poll")).to_contain_text("1 stored")
    expect(row.locator(".feed-last-poll")).to_contain_text("answer 200")
    expect(row.locator(".feed-etag")).to_have_text("ETag kept")
    expect(row.locator(".feed-error")).to_have_text("none")

    page.goto("/alerts")
    expect(page.get_by_text(headline)).to_be_visible()

    page.goto("/admin/poller")
    row.locator(".feed-toggle").click()
    expect(page.locator("#feeds-status")).to_have_text("Disabled Loopback CAP.")
    expect(row.locator(".badge")).to_have_text("disabled")
    row.locator(".feed-toggle").click()
    expect(page.locator("#feeds-status")).to_have_text("Enabled Loopback CAP.")

    row.locator(".feed-edit").click()
    expect(page.locator("#feed-form-heading")).to_have_text("Edit the feed Loopback CAP")
    expect(url).to_have_value(cap_server.url("/cap.xml"))
    interval.fill("300")
    form.locator("#feed-save").click()
    expect(page.locator("#feeds-status")).to_have_text("Saved the feed Loopback CAP.")
    expect(row).to_contain_text("every 300 s")

    row.locator(".feed-remove").click()
    expect(page.locator("#feeds-status")).to_have_text("Removed Loopback CAP.")
    expect(page.locator("#feeds-empty")).to_be_visible()

    audit = poller_audit(live_server)
    changes = [re.search(r'"change":"(\w+)"', details).group(1) for details in audit]  # type: ignore[union-attr]
    assert changes == ["created", "updated", "updated", "updated", "deleted"]
    assert '"fields":["interval_seconds"]' in audit[3]


def test_import_a_cap_file_by_upload(page: Page, live_server: LiveServer, tmp_path: Path) -> None:
    now = datetime.now(UTC)
    headline = "Severe Thunderstorm Warning imported from a file"
    admin_on_feeds(page, live_server)
    form = page.locator("#import-form")
    status = page.locator("#import-status")

    form.locator("#import-submit").click()
    expect(form.locator("#import-file")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#import-file-error")).to_have_text(re.compile("^Choose a CAP"))

    bad = tmp_path / "notes.xml"
    bad.write_bytes(b"<notes>not an alert</notes>")
    form.locator("#import-file").set_input_files(str(bad))
    form.locator("#import-submit").click()
    expect(page.locator("#import-file-error")).to_contain_text("Not a readable alert file")
    expect(form.locator("#import-file")).to_be_focused()

    good = tmp_path / "warning.xml"
    good.write_bytes(cap_message("urn:test:import:1", headline, now))
    form.locator("#import-file").set_input_files(str(good))
    form.locator("#import-submit").click()
    expect(status.locator(".import-result")).to_have_text(
        "Imported warning.xml: 1 alert(s) stored."
    )
    expect(status.locator(".import-alerts li")).to_contain_text("in the broadcast area")
    expect(form.locator("#import-file")).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#import-file-error")).to_have_count(0)

    status.locator(".import-alerts a").click()
    expect(page.get_by_text(headline).first).to_be_visible()
    with live_server.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.details).where(audit_logs.c.target == "alerts.import_alert")
        ).all()
    assert len(rows) == 1 and '"file":"warning.xml"' in rows[0].details
