"""The audio pages in a real browser: live source cards (meter, clipping, last header, archive
playback) and restart, alert actions, received."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlalchemy import insert, select

from alertstation.audio import alerts
from alertstation.audio.archive import STAMP, source_folder
from alertstation.audio.sources import SourceConfig, create_source, set_status
from alertstation.audio.tables import audio_alerts, received_eas_messages
from alertstation.db.engine import begin_write
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.browser.test_location_page import WIDTHS
from tests.eas.test_multimon import require_tool

PASSWORD = "operator password for tests"
SECRET = "never-shown-Pa55word"


def test_source_cards_follow_the_monitor_and_restart_clears_fatal(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    now = datetime.now(UTC)
    config = SourceConfig(
        name="Neighbour FM",
        kind="stream",
        url="http://127.0.0.1:9/live",
        device_params={"auth_username": "monitor"},
        auth_password=SECRET,
    )
    with begin_write(live_server.engine) as conn:
        source_id = create_source(conn, config, now)
        set_status(conn, source_id, state="running", level_dbfs=-18.5, icy_title="Morning show")
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    card = page.locator(f"#audio-source-{source_id}")
    expect(card.locator(".audio-state")).to_have_text("running")
    expect(card.locator(".audio-title")).to_have_text("Now: Morning show")
    expect(card.locator(".audio-level-text")).to_have_text("-18.5 dBFS")
    assert SECRET not in page.content()
    # The monitor writes a fatal state: the card follows it without a reload.
    with begin_write(live_server.engine) as conn:
        set_status(conn, source_id, state="fatal", error_message="unauthorized (HTTP 401)")
    expect(card.locator(".audio-state")).to_have_text("fatal", timeout=60_000)
    expect(card.locator(".audio-error")).to_have_text("unauthorized (HTTP 401)")
    card.get_by_role("button", name="Restart").click()
    expect(card.locator(".audio-state")).to_have_text("starting")
    expect(card.locator(".audio-error")).to_have_text("")
    expect(page.locator("#audio-status")).to_contain_text("Restart requested")
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_a_source_card_lists_its_archive_segments_for_download(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    with begin_write(live_server.engine) as conn:
        source_id = create_source(
            conn, SourceConfig(name="WX", kind="stream", url="http://127.0.0.1:9/"), now
        )
        empty_id = create_source(
            conn, SourceConfig(name="Quiet", kind="stream", url="http://127.0.0.1:9/q"), now
        )
        set_status(conn, source_id, archive_error="cannot write the archive: No space left")
    folder = source_folder(live_server.settings.data_dir, source_id)
    folder.mkdir(parents=True)
    name = f"{now.strftime(STAMP)}-{(now + timedelta(seconds=600)).strftime(STAMP)}.mp3"
    (folder / name).write_bytes(b"ID3" + bytes(1000))
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    card = page.locator(f"#audio-archive-{source_id}")
    card.locator("summary").click()
    expect(card.locator(".audio-archive-error")).to_contain_text("No space left")
    with begin_write(live_server.engine) as conn:  # the next good segment clears it
        set_status(conn, source_id, archive_error=None)
    expect(card.locator(".audio-archive-error")).to_have_text("", timeout=60_000)
    link = card.locator(".audio-segments a")
    expect(link).to_have_count(1)
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == name
    with open(download.value.path(), "rb") as saved:
        assert saved.read() == b"ID3" + bytes(1000)
    quiet = page.locator(f"#audio-archive-{empty_id}")
    quiet.locator("summary").click()
    expect(quiet.locator(".audio-archive-empty")).to_contain_text("The archive is off")
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_alerts_can_be_acknowledged_resolved_and_resolved_all(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    now = datetime.now(UTC)
    with begin_write(live_server.engine) as conn:
        source_id = create_source(
            conn, SourceConfig(name="WX", kind="stream", url="http://127.0.0.1:9/"), now
        )
        ids = [alerts.open_alert(conn, source_id, kind, now) for kind in alerts.KINDS]
        conn.execute(
            insert(received_eas_messages).values(
                source_id=source_id,
                header="ZCZC-WXR-TOR-039173+0030-3281720-KXYZ/NWS-",
                message_key="ZCZC-WXR-TOR-039173+0030-3281720",
                event_code="TOR",
                received_at=now,
                expires_at=now,
                bursts=3,
                relay="not relayed: relay is off for this source",
            )
        )
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio/alerts")
    expect(page.locator("#audio-open-count")).to_have_text("3")
    first = page.locator(f"#audio-alert-{ids[0]}")
    first.get_by_role("button", name="Acknowledge").click()
    expect(page.locator(f"#audio-alert-{ids[0]} .audio-ack")).to_have_text("by ops")
    page.locator(f"#audio-alert-{ids[1]}").get_by_role("button", name="Resolve").click()
    expect(page.locator("#audio-open-count")).to_have_text("2")
    page.get_by_role("button", name="Resolve all").click()
    expect(page.locator("#audio-open-count")).to_have_text("0")
    with live_server.engine.connect() as conn:
        resolved = conn.execute(select(audio_alerts.c.resolved_by)).scalars().all()
    assert resolved == ["ops", "ops", "ops"]
    page.goto("/eas/received")
    expect(page.locator("#eas-received")).to_contain_text("ZCZC-WXR-TOR-039173+0030-3281720")
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def test_a_source_card_meters_marks_clipping_names_the_last_header_and_plays_the_archive(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    with begin_write(live_server.engine) as conn:
        source_id = create_source(
            conn,
            SourceConfig(
                name="WX",
                kind="stream",
                url="http://127.0.0.1:9/wx",
                device_params={"auth_username": "monitor"},
                auth_password=SECRET,
            ),
            now,
        )
        set_status(conn, source_id, state="running", level_dbfs=-12.0, peak_dbfs=-0.5)
        alerts.open_alert(conn, source_id, "clipping", now, "samples at full scale")
        conn.execute(
            insert(received_eas_messages).values(
                source_id=source_id,
                header="ZCZC-WXR-TOR-039173+0030-3281720-KXYZ/NWS-",
                message_key="ZCZC-WXR-TOR-039173+0030-3281720",
                event_code="TOR",
                received_at=now,
                expires_at=now,
                bursts=3,
            )
        )
    # A real 90-second MP3 segment: the last archived minute starts 30 s in.
    folder = source_folder(live_server.settings.data_dir, source_id)
    folder.mkdir(parents=True)
    start = now - timedelta(seconds=90)
    name = f"{start.strftime(STAMP)}-{now.strftime(STAMP)}.mp3"
    subprocess.run(
        [
            require_tool("ffmpeg"),
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=90",
        ]
        + ["-ac", "1", "-ar", "22050", "-c:a", "libmp3lame", "-b:a", "32k", str(folder / name)],
        check=True,
        timeout=120,
    )
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    card = page.locator(f"#audio-source-{source_id}")
    expect(card.locator(".audio-meter-scale li")).to_have_text(
        ["-60", "-40", "-30", "-20", "-10", "-6", "-3", "0"]
    )
    # -12 dBFS is 80 % along a -60..0 scale; the peak hold marker sits at -0.5 dBFS.
    bar = card.locator(".audio-meter-bar")
    expect(bar).to_have_attribute("style", "width: 80%;")
    peak = card.locator(".audio-meter-peak")
    expect(peak).to_be_visible()
    left = float(peak.evaluate("node => parseFloat(node.style.left)"))
    assert 99.0 < left < 99.5
    expect(card.locator(".audio-peak-text")).to_have_text("-0.5 dBFS")
    expect(card.locator(".audio-clip")).to_have_text("CLIPPING")
    expect(card.locator(".audio-header")).to_contain_text("Tornado Warning")
    expect(card.locator(".audio-url")).to_contain_text("http://127.0.0.1:9/wx")
    expect(card.locator(".audio-url")).to_contain_text("user monitor")
    assert SECRET not in page.content()
    # Play the last archived minute: the newest segment from 30 s in.
    card.get_by_role("button", name="Play the last archived minute").click()
    player = card.locator(".audio-player")
    expect(player).to_be_visible()
    assert player.evaluate("node => node.src").endswith(f"/archive/{name}#t=30")
    page.wait_for_function(
        "node => !node.paused && node.currentTime >= 30", arg=player.element_handle()
    )
    # The clipping alert resolved: the mark goes on the next poll.
    with begin_write(live_server.engine) as conn:
        alerts.resolve_all(conn, "ops", now)
    expect(card.locator(".audio-clip")).to_be_hidden(timeout=60_000)
    assert page_log.console_errors() == []
    assert page_log.csp_violations() == []


def assert_scale_readable(scale: Locator) -> None:
    """The meter's shown dBFS labels sit apart (2 px at least), inside the meter, -60 and 0 kept."""
    boxes = scale.evaluate(
        """(ol) => [...ol.children].filter((li) => li.offsetParent !== null).map((li) => {
             const box = li.getBoundingClientRect();
             return {text: li.textContent, left: box.left, right: box.right};
           })"""
    )
    meter = scale.evaluate(
        "(ol) => { const b = ol.getBoundingClientRect(); return [b.left, b.right]; }"
    )
    texts = [box["text"] for box in boxes]
    assert texts[0] == "-60" and texts[-1] == "0" and len(texts) >= 4, texts
    for before, after in zip(boxes, boxes[1:], strict=False):
        assert before["right"] + 2 <= after["left"], f"{before} overlaps {after}"
    assert meter[0] - 0.5 <= boxes[0]["left"] and boxes[-1]["right"] <= meter[1] + 0.5


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_sources_page_and_its_form_fit_a_phone_and_pass_axe(
    page: Page, page_log: PageLog, live_server: LiveServer, width: str
) -> None:
    now = datetime.now(UTC)
    long_url = "http://127.0.0.1:9/" + "a-very-long-mount-name/" * 8 + "live.mp3"
    with begin_write(live_server.engine) as conn:
        source_id = create_source(
            conn,
            SourceConfig(
                name="Neighbour FM with a long name",
                kind="stream",
                url=long_url,
                device_params={"auth_username": "monitor"},
                auth_password=SECRET,
            ),
            now,
        )
        set_status(conn, source_id, state="running", level_dbfs=-20.0, peak_dbfs=-6.0)
    page.set_viewport_size(WIDTHS[width])
    create_user(live_server, "ops", "operator", PASSWORD)
    sign_in(page, live_server, "ops", PASSWORD)
    page.goto("/audio")
    card = page.locator(f"#audio-source-{source_id}")
    expect(card.locator(".audio-meter-peak")).to_be_visible()
    assert_scale_readable(card.locator(".audio-meter-scale"))
    card.get_by_role("button", name="Edit").click()
    expect(page.locator("#audio-f-password-hint")).to_contain_text("A password is stored")
    page.locator("#audio-f-name").fill("")
    page.locator("#audio-f-url").fill("ftp://example.org/")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#audio-f-url-error")).to_contain_text("http:// or https://")
    expect(page.locator("#audio-f-name")).to_be_focused()
    assert axe_violations(page) == []
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert page_log.console_errors() == []
