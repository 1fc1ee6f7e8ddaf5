"""The web traffic dashboard in a real browser: reached from the Security Center, drill-down by
clicking, a multi-section CSV and a multi-page A4 PDF built in the page (checked with pdfinfo)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from alertstation.traffic.recorder import TrafficRecorder
from alertstation.traffic.rows import Observed
from alertstation.traffic.settings import TrafficSettingsCache
from tests.browser.conftest import LiveServer, PageLog, create_user, sign_in

PASSWORD = "traffic dashboard password for the browser"
CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)


def seed(live_server: LiveServer) -> None:
    """Requests over the last three days: 30 pages, several visitors, some errors."""
    engine = live_server.engine
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    now = live_server.app.station.clock().timestamp()
    for index in range(120):
        recorder.capture(
            Observed(
                ts=now - 3600 * (index % 70) - index,
                method="GET",
                path=f"/alerts/{index % 30}" if index % 7 else "/about.html",
                status=404 if index % 11 == 0 else 200,
                response_ms=float(index % 13),
                content_length=1000 + index,
                client_ip=f"198.51.100.{index % 9 + 1}",
                user_agent=CHROME,
                referrer="https://www.google.com/search?q=alert+station",
                accept_language="en-US",
                authenticated=False,
            )
        )
    assert recorder.flush() == 120


@pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="needs pdfinfo (poppler-utils)")
def test_dashboard_drills_down_and_exports_csv_and_a4_pdf(
    page: Page, page_log: PageLog, live_server: LiveServer, tmp_path: Path
) -> None:
    seed(live_server)
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/security/center?tab=traffic")
    page.get_by_role("link", name="Web traffic dashboard").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Web traffic")
    hits = page.locator('#td-summary [data-key="hits"] strong')
    expect(hits).to_have_text("120")

    page.locator(
        '[data-section="top_pages"] tr[data-filter="path"]', has_text="/about.html"
    ).click()
    expect(page.locator("#td-filters")).to_contain_text("path: /about.html")
    expect(hits).to_have_text("18")  # index % 7 == 0 for 18 of 120
    page.locator('#td-filters button[data-remove="path"]').click()
    expect(hits).to_have_text("120")

    with page.expect_download() as csv_download:
        page.get_by_role("button", name="Export CSV").click()
    csv_path = tmp_path / "traffic.csv"
    csv_download.value.save_as(csv_path)
    text = csv_path.read_bytes().decode()
    assert text.startswith("# Summary\r\nmetric,value,previous\r\nhits,120,0\r\n")
    for section in ("# Daily", "# Top pages", "# Browsers", "# Referrers", "# Top error URLs"):
        assert section in text

    with page.expect_download() as pdf_download:
        page.get_by_role("button", name="Download PDF").click()
    pdf_path = tmp_path / "traffic.pdf"
    pdf_download.value.save_as(pdf_path)
    info = subprocess.run(
        ["pdfinfo", str(pdf_path)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    assert re.search(r"Page size:\s+595 x 842 pts \(A4\)", info), info
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))  # type: ignore[union-attr]
    assert pages >= 2
    assert page_log.console_errors() == []
