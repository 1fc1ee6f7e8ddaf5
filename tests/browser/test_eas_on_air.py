"""ON AIR and Stop in a real browser, against a real icecast2, heard by multimon-ng.

One lean walk (the issue's CI budget): an operator sends a Tornado Warning through the
confirmation dialog to a throwaway icecast2; while it streams the banner reads "ON AIR: Tornado
Warning" in its on-air colours with a Stop button; Stop ends the stream, and multimon-ng,
listening to the mount, hears the header and then the end of message (three NNNN) after the
cut, long before the message would have ended. The airing loop runs in a thread of the test, as
the worker runs it. The same sequence runs on both databases through the API in
``tests/eas/test_airing_truth.py``; the no-output dialog is in ``test_eas_manual.py``.
"""

from __future__ import annotations

import io
import threading
import wave

import numpy as np
from playwright.sync_api import Dialog, Page, expect
from sqlalchemy import select

from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.tables import eas_airing_queue
from alertstation.eas.decode import decode_pcm
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in
from tests.eas.test_icecast import Listener, mp3_to_pcm
from tests.eas.test_multimon import MULTIMON_RATE, multimon
from tests.icecast import icecast_server

PASSWORD = "operator password for tests"
MOUNT = "/eas.mp3"
#: The recorded voice uploaded with the activation: the message lasts well over a minute.
VOICE_SECONDS = 60
#: At most this much of it is heard before Stop cuts it (ON AIR shows within a few seconds).
HEARD_SECONDS = 45.0
#: How long the lead-in and the three headers take to stream, with a margin.
HEADERS_MS = 10_000


def voice_wav() -> bytes:
    """A minute of a quiet 400 Hz tone as a 16-bit mono WAV (the activation's recorded voice)."""
    rate = 22050
    tone = 0.1 * np.sin(2 * np.pi * 400 * np.arange(VOICE_SECONDS * rate) / rate)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((tone * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def test_on_air_banner_and_stop_end_the_stream_with_an_eom(
    page: Page, page_log: PageLog, live_server: LiveServer
) -> None:
    create_user(live_server, "ops", "operator", PASSWORD)
    station = live_server.app.station
    with icecast_server() as icecast:
        with begin_write(live_server.engine) as conn:
            settings_airing.save(
                conn,
                {
                    "icecast_enabled": True,
                    "icecast_host": "127.0.0.1",
                    "icecast_port": icecast.port,
                    "icecast_mount": MOUNT,
                    "icecast_password": icecast.password,
                },
                updated_by="test",
                now=station.clock(),
            )
        stop_loop = threading.Event()
        loop = threading.Thread(target=onair.airing_loop, args=(station, stop_loop, 0.1))
        loop.start()
        listener = Listener(icecast.port, MOUNT, timeout=120)
        listener.start()
        try:
            sign_in(page, live_server, "ops", PASSWORD)
            page.goto(live_server.url_for("/eas/manual"))
            page.locator("#eas-org").select_option("WXR")
            page.locator("#eas-event").select_option("TOR")
            page.get_by_label("SAME location codes", exact=False).fill("039137")
            page.locator("#eas-purge").select_option("0030")
            page.locator("#eas-audio").set_input_files(
                {"name": "voice.wav", "mimeType": "audio/wav", "buffer": voice_wav()}
            )
            page.get_by_role("button", name="Create activation").click()
            row = page.locator("#eas-activations tbody tr")
            expect(row).to_have_count(1)

            row.get_by_role("button", name="Send", exact=True).click()
            dialog = page.locator("#eas-confirm")
            expect(dialog).to_be_visible()
            expect(dialog).to_contain_text("Tornado Warning")
            expect(dialog).to_contain_text("30 minutes")
            expect(dialog).to_contain_text("icecast")
            expect(page.locator("#eas-confirm-archive")).to_be_visible()
            page.locator("#eas-confirm-air").click()

            banner = page.locator("#broadcast-banner")
            expect(banner).to_have_attribute("data-state", "on-air", timeout=30_000)
            expect(banner).to_contain_text("ON AIR: Tornado Warning")
            stop = banner.get_by_role("button", name="Stop")
            expect(stop).to_be_visible()
            on_air_colour = banner.evaluate("el => getComputedStyle(el).backgroundColor")
            # The stream runs in real time: let the lead-in and the three headers go out
            # (about 8 s) before the operator stops it during the minute of voice.
            page.wait_for_timeout(HEADERS_MS)

            def accept(confirm: Dialog) -> None:
                confirm.accept()

            page.on("dialog", accept)
            stop.click()
            listener.join(timeout=90)
            assert not listener.is_alive()
            expect(banner).not_to_have_attribute("data-state", "on-air", timeout=30_000)
            expect(stop).to_be_hidden()
        finally:
            stop_loop.set()
            loop.join(timeout=60)
    assert not loop.is_alive()

    with live_server.engine.connect() as conn:
        (item,) = conn.execute(select(eas_airing_queue)).all()
    assert item.state == "stopped" and item.stop_requested_by == "ops", item.error
    assert listener.data, listener.error
    pcm = mp3_to_pcm(listener.data)
    lines = multimon(pcm)
    assert lines, "multimon-ng heard nothing"
    header = next(line for line in lines if line.startswith("EAS: ZCZC-WXR-TOR-039137+0030-"))
    # The header, then (the attention signal cut) the end of message: three NNNN, nothing after.
    assert lines[-3:] == ["EAS: NNNN"] * 3 and lines.index(header) < len(lines) - 3
    assert lines.count("EAS: NNNN") == 3
    assert len(pcm) / MULTIMON_RATE < HEARD_SECONDS  # cut short: the minute of voice never ended
    ours = decode_pcm(pcm, MULTIMON_RATE)
    assert [(d.kind, d.bursts) for d in ours if d.kind == "eom"] == [("eom", 3)]
    assert on_air_colour == "rgb(176, 0, 32)"
    assert page_log.csp_violations() == []
