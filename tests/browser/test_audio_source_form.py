"""The audio source form in a real browser, on both backends, against a real icecast2.

A private icecast2 on loopback (``tests.icecast``) protects its mount with a listener login, and
ffmpeg feeds it a tone. Through the form on /audio an operator meets the stream check (a wrong
password: the failure is shown in the form, beside the address, with "Save anyway"), adds the
stream with its credentials and sees the card reach ``running`` with the audio monitor running
beside the live server; edits it with the password left blank (the stored one is kept),
disables and deletes it. Every change leaves the same ``config.updated`` row as the JSON API.
Waits on the daemons have generous deadlines and assert no time.
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from alertstation.app import create_app
from alertstation.audio.monitor import AudioMonitor, MonitorSettings
from alertstation.audio.tables import audio_sources
from alertstation.audit.tables import audit_logs
from alertstation.db.engine import make_engine
from alertstation.db.migrate import upgrade_to_head
from alertstation.operations.compliance.settings import assignments
from tests.browser.conftest import LiveServer, PageLog, create_user, serve_in_thread, sign_in
from tests.eas.test_multimon import require_tool
from tests.icecast import IcecastServer, ListenerLogin, icecast_server, stop
from tests.processes import DEADLINE, wait_until
from tests.support import BACKENDS, create_database, drop_database, make_settings

MOUNT = "/wx.mp3"
LISTENER = "monitor"
LISTENER_PASSWORD = "Ice-Listener-Pa55-form"
WRONG_PASSWORD = "not-the-password"
PASSWORD = "operator password for tests"
FAST = MonitorSettings(
    sample_rate=8000,
    backoff_base=0.2,
    backoff_cap=1.0,
    persist_every=0.2,
    rescan_every=0.2,
    stall_timeout=20.0,
    source_down_after=5.0,
)
STATE_WAIT_MS = int(DEADLINE * 1000)
CAT = "/bin/cat"  # the one program the test station's receivers may run, without arguments


@pytest.fixture(params=BACKENDS)
def live_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """The app served on loopback, on a fresh migrated database of each backend."""
    url = create_database(request.param, tmp_path)
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
        settings = make_settings(tmp_path, url, receiver_allowlist=(CAT,))
        app = create_app(settings, engine=engine)
        errors: list[BaseException] = []
        with serve_in_thread(app, errors) as base_url:
            yield LiveServer(base_url, engine, settings, app, errors)
        if errors:
            pytest.fail(f"the live server raised: {errors!r}")
    finally:
        engine.dispose()
        drop_database(url)


def _mount_live(server: IcecastServer) -> bool:
    login = base64.b64encode(f"{LISTENER}:{LISTENER_PASSWORD}".encode()).decode()
    request = urllib.request.Request(server.url(MOUNT), headers={"Authorization": "Basic " + login})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 - loopback
            return answer.status == 200 and len(answer.read(1024)) > 0
    except (OSError, urllib.error.HTTPError):
        return False


@pytest.fixture(scope="module")
def icecast() -> Iterator[IcecastServer]:
    """icecast2 with a listener-protected mount that ffmpeg feeds with a tone."""
    ffmpeg = require_tool("ffmpeg")
    login = ListenerLogin(MOUNT, LISTENER, LISTENER_PASSWORD)
    with icecast_server("alertstation-form-icecast-", protected=login) as server:
        source = subprocess.Popen(
            [ffmpeg, "-hide_banner", "-loglevel", "error", "-re"]
            + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050"]
            + ["-c:a", "libmp3lame", "-b:a", "32k", "-content_type", "audio/mpeg", "-f", "mp3"]
            + [f"icecast://source:{server.password}@127.0.0.1:{server.port}{MOUNT}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: _mount_live(server), "the mount to carry audio")
            yield server
        finally:
            stop(source)


@pytest.fixture
def monitor(live_server: LiveServer) -> Iterator[None]:
    """The audio monitor (as the worker leader runs it) on the live server's station."""
    halt = threading.Event()
    runner = AudioMonitor(live_server.app.station, halt, FAST)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        halt.set()
        thread.join(timeout=60)
        assert not thread.is_alive()


def _source(live_server: LiveServer, name: str) -> Any:
    with live_server.engine.connect() as conn:
        return conn.execute(select(audio_sources).where(audio_sources.c.name == name)).first()


def _audit_changes(live_server: LiveServer) -> list[dict[str, Any]]:
    with live_server.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.details)
            .where(audit_logs.c.action == "config.updated", audit_logs.c.target == "audio")
            .order_by(audit_logs.c.id)
        ).scalars()
        return [json.loads(details) for details in rows]


def _unexpected(errors: list[str]) -> list[str]:
    """Return the console errors other than the refused stream check's 422, which is expected."""
    return [text for text in errors if "status of 422" not in text]


def test_an_operator_adds_a_protected_stream_through_the_form_and_it_runs(
    page: Page, page_log: PageLog, live_server: LiveServer, icecast: IcecastServer, monitor: None
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    expect(page.locator("#audio-none")).to_be_visible()
    form = page.locator("#audio-source-form")
    name, url = form.get_by_label("Name", exact=True), form.get_by_label("Stream URL")

    # Nothing filled in: every error at once, beside its field, focus on the first.
    form.get_by_role("button", name="Add source").click()
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#audio-f-name-error")).to_have_text("Enter a name for the source.")
    expect(url).to_have_attribute("aria-describedby", "audio-f-url-error audio-f-url-hint")
    expect(name).to_be_focused()

    # A wrong password: the stream check's real answer is shown in the form.
    name.fill("Weather radio")
    url.fill(icecast.url(MOUNT))
    form.get_by_label("User name").fill(LISTENER)
    form.get_by_label("Password", exact=True).fill(WRONG_PASSWORD)
    form.get_by_label("Relay alerts heard on this source").check()
    form.get_by_label("Assigned monitoring source").check()
    form.get_by_role("button", name="Add source").click()
    preflight = page.locator("#audio-preflight")
    expect(preflight).to_contain_text("The stream check failed")
    expect(preflight).to_contain_text("HTTP 401")
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(url).to_be_focused()
    expect(form.get_by_role("button", name="Save anyway")).to_be_visible()
    expect(name).not_to_have_attribute("aria-invalid", "true")
    assert _source(live_server, "Weather radio") is None

    # The right password: added, and the monitor brings the card to running.
    form.get_by_label("Password", exact=True).fill(LISTENER_PASSWORD)
    with page.expect_navigation():
        form.get_by_role("button", name="Add source").click()
    expect(page.locator("#audio-status")).to_contain_text("Added Weather radio.")
    row = _source(live_server, "Weather radio")
    assert row.auth_password == LISTENER_PASSWORD and row.relay_enabled and row.enabled
    card = page.locator(f"#audio-source-{row.id}")
    expect(card.locator(".audio-state")).to_have_text("running", timeout=STATE_WAIT_MS)
    expect(card.locator(".audio-url")).to_contain_text(icecast.url(MOUNT))
    expect(card.locator(".audio-url")).to_contain_text("password stored")
    expect(card.locator(".audio-level-text")).to_contain_text("dBFS", timeout=STATE_WAIT_MS)
    expect(card.locator(".audio-peak-text")).to_contain_text("dBFS")
    expect(card.locator(".audio-assigned")).to_be_visible()
    expect(card.locator(".audio-relay")).to_be_visible()
    with live_server.engine.connect() as conn:
        assert f"audio:{row.id}" in assignments(conn)

    # Edit: the password field stays blank and the stored one is kept.
    card.get_by_role("button", name="Edit").click()
    expect(page.locator("#audio-form-title")).to_have_text("Edit Weather radio")
    expect(page.locator("#audio-f-password-hint")).to_contain_text("A password is stored")
    expect(form.get_by_label("Password", exact=True)).to_have_value("")
    expect(form.get_by_label("Assigned monitoring source")).to_be_checked()
    name.fill("Weather radio north")
    with page.expect_navigation():
        form.get_by_role("button", name="Save changes").click()
    row = _source(live_server, "Weather radio north")
    assert row.auth_password == LISTENER_PASSWORD

    # Disable, then delete.
    card = page.locator(f"#audio-source-{row.id}")
    card.get_by_role("button", name="Disable").click()
    expect(card.locator(".audio-state")).to_have_text("stopped", timeout=STATE_WAIT_MS)
    expect(card.get_by_role("button", name="Enable")).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    card.get_by_role("button", name="Delete").click()
    expect(card).to_have_count(0)
    assert _source(live_server, "Weather radio north") is None

    def unassigned() -> bool:
        with live_server.engine.connect() as conn:
            return f"audio:{row.id}" not in assignments(conn)

    wait_until(unassigned, "the deleted source's assignment to go")

    changes = [(entry["change"], entry["name"]) for entry in _audit_changes(live_server)]
    assert changes == [
        ("created", "Weather radio"),
        ("updated", "Weather radio north"),
        ("updated", "Weather radio north"),
        ("deleted", "Weather radio north"),
    ]
    for text in [page.content(), *(json.dumps(entry) for entry in _audit_changes(live_server))]:
        assert LISTENER_PASSWORD not in text
    assert _unexpected(page_log.console_errors()) == []
    assert page_log.csp_violations() == []


def test_save_anyway_adds_a_stream_the_check_refused(
    page: Page, page_log: PageLog, live_server: LiveServer, icecast: IcecastServer
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    form = page.locator("#audio-source-form")
    form.get_by_label("Name", exact=True).fill("Backup feed")
    form.get_by_label("Stream URL").fill(icecast.url(MOUNT))
    form.get_by_label("User name").fill(LISTENER)
    form.get_by_label("Password", exact=True).fill(WRONG_PASSWORD)
    form.get_by_role("button", name="Add source").click()
    expect(page.locator("#audio-preflight")).to_contain_text("HTTP 401")
    with page.expect_navigation():
        form.get_by_role("button", name="Save anyway").click()
    row = _source(live_server, "Backup feed")
    assert row is not None and row.auth_password == WRONG_PASSWORD
    expect(page.locator(f"#audio-source-{row.id}")).to_be_visible()
    assert _unexpected(page_log.console_errors()) == []


def test_a_radio_receiver_is_added_with_the_stations_refusal_beside_its_command(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    form = page.locator("#audio-source-form")
    form.get_by_label("Radio receiver").check()
    expect(form.get_by_label("Stream URL")).to_be_hidden()
    command, rate = (
        form.get_by_label("Command, one argument per line"),
        form.get_by_label("Sample rate it writes (Hz)"),
    )
    rate.fill("100")
    form.get_by_role("button", name="Add source").click()
    # Every error the browser can see, at once.
    for field in (form.get_by_label("Name", exact=True), command, rate):
        expect(field).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_label("Name", exact=True)).to_be_focused()
    # The station's own refusal lands beside the field it names.
    form.get_by_label("Name", exact=True).fill("Weather receiver")
    rate.fill("16000")
    command.fill(f"{CAT}\n-n")
    form.get_by_role("button", name="Add source").click()
    expect(command).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#audio-f-command-error")).to_contain_text("takes only the arguments")
    expect(command).to_be_focused()
    expect(rate).not_to_have_attribute("aria-invalid", "true")
    command.fill(CAT)
    with page.expect_navigation():
        form.get_by_role("button", name="Add source").click()
    row = _source(live_server, "Weather receiver")
    assert row.kind == "receiver" and json.loads(row.command) == [CAT]
    assert json.loads(row.device_params) == {"sample_rate": 16000, "channels": 1}
    card = page.locator(f"#audio-source-{row.id}")
    expect(card).to_contain_text("Radio receiver")
    expect(card.locator(".audio-url")).to_have_text(f"Command: {CAT}")
    assert [entry["change"] for entry in _audit_changes(live_server)] == ["created"]
    assert _unexpected(page_log.console_errors()) == []
