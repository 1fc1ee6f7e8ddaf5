"""The web traffic dashboard in a real browser: reached from the Security Center, drill-down by
clicking or by keyboard to exactly the value chosen, the view kept in the address bar across a
reload, human units, axis values and legends, the GeoIP panel's help, and exports (a
multi-section CSV and a multi-page A4 PDF built in the page, checked with pdfinfo) titled with
every active filter."""

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
from tests.security.test_geoip_files import city_db

PASSWORD = "traffic dashboard password for the browser"
CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)


def seed(live_server: LiveServer) -> None:
    """Requests over the last three days: 30 pages, several visitors, eleven 404s, eight 401s."""
    engine = live_server.engine
    recorder = TrafficRecorder(engine, TrafficSettingsCache(engine))
    now = live_server.app.station.clock().timestamp()
    for index in range(120):
        recorder.capture(
            Observed(
                ts=now - 3600 * (index % 70) - index,
                method="GET",
                path=f"/alerts/{index % 30}" if index % 7 else "/about.html",
                status=404 if index % 11 == 0 else 401 if index % 13 == 5 else 200,
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
    assert text.startswith('# Report\r\ntitle,"Web traffic ')
    assert 'all traffic"\r\n' in text and "\r\nfilters,none\r\n" in text
    assert "\r\n# Summary\r\nmetric,value,previous\r\nhits,120,0\r\n" in text
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


def _pdf_info(path: Path) -> str:
    return subprocess.run(
        ["pdfinfo", str(path)], check=True, capture_output=True, text=True, timeout=60
    ).stdout


@pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="needs pdfinfo (poppler-utils)")
def test_a_status_row_filters_by_its_code_kept_in_the_address_and_named_by_exports(
    page: Page, page_log: PageLog, live_server: LiveServer, tmp_path: Path
) -> None:
    seed(live_server)
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/traffic/dashboard?days=30")
    hits = page.locator('#td-summary [data-key="hits"] strong')
    expect(hits).to_have_text("120")
    expect(page.locator("#td-days")).to_have_value("30")

    page.locator('[data-section="status_codes"] tr[data-filter="status"]', has_text="404").click()
    expect(page.locator("#td-filters")).to_contain_text("status: 404")
    expect(hits).to_have_text("11")  # the 404s only, not the 19 answers of the 4xx family
    expect(page).to_have_url(re.compile(r"/traffic/dashboard\?days=30&status=404$"))
    expect(page.locator("#td-title")).to_contain_text("filtered to status 404")

    page.reload()
    expect(page.locator("#td-filters")).to_contain_text("status: 404")
    expect(hits).to_have_text("11")
    expect(page.locator("#td-days")).to_have_value("30")

    with page.expect_download() as csv_download:
        page.get_by_role("button", name="Export CSV").click()
    csv_path = tmp_path / "traffic.csv"
    csv_download.value.save_as(csv_path)
    text = csv_path.read_text()
    first = text.split("\n\n")[0]
    assert "filtered to status 404" in first and "filter,status,404" in first

    with page.expect_download() as pdf_download:
        page.get_by_role("button", name="Download PDF").click()
    assert pdf_download.value.suggested_filename.endswith("_filtered.pdf")
    pdf_path = tmp_path / "traffic.pdf"
    pdf_download.value.save_as(pdf_path)
    title = re.search(r"Title:\s+(.*)", _pdf_info(pdf_path))
    assert title is not None and title.group(1).endswith("filtered to status 404"), title

    page.go_back()  # the view before the drill-down
    expect(page.locator("#td-filters")).to_have_text("")
    expect(hits).to_have_text("120")
    assert page_log.console_errors() == []


def test_drill_down_by_keyboard_human_units_axes_legends_and_the_geoip_help(
    page: Page, page_log: PageLog, live_server: LiveServer, tmp_path: Path
) -> None:
    seed(live_server)
    create_user(live_server, "chief", "admin", PASSWORD)
    sign_in(page, live_server, "chief", PASSWORD)
    page.goto("/traffic/dashboard")
    hits = page.locator('#td-summary [data-key="hits"] strong')
    expect(hits).to_have_text("120")

    # Bandwidth: 120 answers of 1000 + index bytes = 127,140 bytes = 124 KB (three figures).
    expect(page.locator('#td-summary [data-key="bandwidth_bytes"] strong')).to_have_text("124 KB")
    for chart in ("#td-series", "#td-bandwidth"):
        assert page.locator(f"{chart} text.td-axis-y").count() >= 3, chart
        assert page.locator(f"{chart} text.td-axis-x").count() >= 1, chart
    expect(page.locator("#td-series .td-legend")).to_have_text("HitsPage views")
    expect(page.locator("#td-bandwidth text.td-axis-y").last).to_have_text(re.compile(r"KB$"))

    # Keyboard: Tab from one value of a table reaches the next; Enter narrows to it.
    methods = page.locator('[data-section="status_codes"] button.td-drill')
    methods.first.focus()
    page.keyboard.press("Tab")
    expect(methods.nth(1)).to_be_focused()
    chosen = methods.nth(1).inner_text()
    page.keyboard.press("Enter")
    expect(page.locator("#td-filters")).to_contain_text(f"status: {chosen}")
    expect(hits).to_have_text("11" if chosen == "404" else "8")

    help_box = page.locator("#td-geoip-help")
    expect(help_box).to_be_visible()
    expect(help_box).to_contain_text("No GeoIP database is installed")
    expect(help_box).to_contain_text("Upload it with the form below")
    file_input = page.get_by_label("GeoIP database file (.mmdb)")
    file_input.set_input_files(str(city_db(tmp_path)))
    page.get_by_role("button", name="Upload").click()
    expect(page.locator("#td-geoip-result")).to_have_text("Installed a City database.")
    expect(page.locator("#td-geoip-state")).to_contain_text("Places: GeoIP2-City")
    expect(help_box).to_be_hidden()
    assert page_log.console_errors() == []
