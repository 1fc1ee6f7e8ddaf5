"""The alert list on both backends: filters for state, severity, area and event, the sort, and
the page that keeps them in its address."""

from __future__ import annotations

import re
from html import unescape

import pytest

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import set_alert_settings
from alertstation.db.engine import begin_write
from tests.alerts.test_routes import NEW, fixture, store, today
from tests.support import StationHarness

# The sample warning moved out of the broadcast area, made a Minor "Flood Advisory" (FLS) with
# a VTEC event number of its own.
ADVISORY = [
    (b"<severity>Severe</severity>", b"<severity>Minor</severity>"),
    (b"Severe Thunderstorm Warning", b"Flood Advisory"),
    (b"<value>SVR</value>", b"<value>FLS</value>"),
    (b".0045.", b".0046."),
    (b"040109", b"040111"),
    (b"040017", b"040019"),
    (b"OKC109", b"OKC111"),
    (b"OKC017", b"OKC019"),
]


@pytest.fixture(autouse=True)
def noon_today(station: StationHarness) -> None:
    station.clock.now = station.clock.now.replace(hour=12, minute=0, second=0)


@pytest.fixture
def three_alerts(station: StationHarness) -> None:
    """Store an active Severe warning in the area, an active Minor advisory outside it and an
    expired Severe warning in the area (on its 2025 date)."""
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    store(station, NEW, today(station))
    data = fixture(NEW, today(station), tag=".002.1")
    for old, new in ADVISORY:
        data = data.replace(old, new)
    results = import_messages(station.engine, data, "advisory.xml", now=station.clock())
    assert [getattr(r, "outcome", r) for r in results] == ["stored"]
    store(station, NEW, tag=".003.1")


def events(station: StationHarness, query: str) -> list[tuple[str, str, str]]:
    result = station.client.simulate_get("/api/alerts", query_string=query)
    assert result.status_code == 200, result.text
    return [(a["event_code"], a["severity"], a["state"]) for a in result.json["alerts"]]


@pytest.mark.usefixtures("three_alerts")
def test_api_filters_by_severity_area_and_event(station: StationHarness) -> None:
    svr_active = ("SVR", "Severe", "active")
    fls = ("FLS", "Minor", "active")
    svr_expired = ("SVR", "Severe", "expired")
    assert sorted(events(station, "")) == [fls, svr_active]
    assert events(station, "severity=Minor") == [fls]
    assert events(station, "severity=severe") == [svr_active]  # any case
    assert events(station, "severity=Extreme") == []
    assert sorted(events(station, "status=all&severity=Severe")) == [svr_active, svr_expired]
    assert events(station, "area=in") == [svr_active]
    assert events(station, "area=out") == [fls]
    assert sorted(events(station, "status=all&area=in")) == [svr_active, svr_expired]
    assert events(station, "event=Flood%20Advisory") == [fls]
    assert events(station, "event=FLS&area=in") == []
    assert events(station, "status=expired&area=in&severity=Severe&event=SVR") == [svr_expired]


@pytest.mark.usefixtures("three_alerts")
def test_api_sorts(station: StationHarness) -> None:
    assert [e[0] for e in events(station, "status=all&sort=event")] == ["FLS", "SVR", "SVR"]
    assert events(station, "status=all&sort=oldest")[0] == ("SVR", "Severe", "expired")
    assert events(station, "status=all&sort=newest")[-1] == ("SVR", "Severe", "expired")
    assert [e[1] for e in events(station, "status=all&sort=severity")] == [
        "Severe",
        "Severe",
        "Minor",
    ]
    assert [e[2] for e in events(station, "status=all&sort=expires")] == [
        "expired",
        "active",
        "active",
    ]
    # A page of one keeps the order across pages.
    second = events(station, "status=all&sort=severity&limit=1&offset=2")
    assert second == [("FLS", "Minor", "active")]


@pytest.mark.parametrize(
    ("query", "field"),
    [("severity=Bad", "severity"), ("area=near", "area"), ("sort=random", "sort")],
)
def test_api_refuses_bad_list_arguments(station: StationHarness, query: str, field: str) -> None:
    result = station.client.simulate_get("/api/alerts", query_string=query)
    assert result.status_code == 422
    assert field in result.json["error"]["message"]


def _selected(html: str, select_id: str) -> str:
    block = html[html.index(f'id="{select_id}"') :]
    block = block[: block.index("</select>")]
    found = re.search(r'<option value="([^"]*)" selected>', block)
    assert found, select_id
    return found.group(1)


@pytest.mark.usefixtures("three_alerts")
def test_page_keeps_the_filters_and_sort_in_its_form_and_colours_severity(
    station: StationHarness,
) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    plain = viewer.request("GET", "/alerts", csrf=False)
    assert plain.status_code == 200
    assert 'class="severity severity-severe">Severe</span>' in plain.text
    assert 'class="severity severity-minor">Minor</span>' in plain.text
    assert "Clear filters" not in plain.text
    assert _selected(plain.text, "alerts-state") == "active"
    assert _selected(plain.text, "alerts-sort") == "newest"

    query = "status=all&severity=Severe&area=in&sort=oldest"
    page = viewer.request("GET", "/alerts", query_string=query, csrf=False)
    assert page.status_code == 200
    text = page.text
    assert _selected(text, "alerts-state") == "all"
    assert _selected(text, "alerts-severity") == "Severe"
    assert _selected(text, "alerts-area") == "in"
    assert _selected(text, "alerts-sort") == "oldest"
    assert "<h1>Alerts</h1>" in text and "2 alerts match these filters" in text
    assert "Flood Advisory</a>" not in text
    assert text.count('<tr data-id="') == 2
    assert 'href="/alerts">Clear filters</a>' in text
    # The live refresh asks the API for the same list.
    data_query = unescape(re.search(r'data-query="([^"]*)"', text).group(1))  # type: ignore[union-attr]
    assert data_query == "status=all&severity=Severe&area=in&sort=oldest&limit=200"
    # The column headings sort the same list: the filters stay, the sorted column says so.
    kept = "/alerts?status=all&amp;severity=Severe&amp;area=in&amp;sort="
    sent = f'<th scope="col" aria-sort="ascending"><a class="sort-link" href="{kept}newest">Sent'
    assert sent in text
    assert f'href="{kept}severity">Severity' in text
    # The event filter offers the stored event names.
    assert '<option value="Flood Advisory">' in text

    none = viewer.request("GET", "/alerts", query_string="event=TOR", csrf=False)
    assert "No alert matches these filters" in none.text
    bad = viewer.request("GET", "/alerts", query_string="severity=Bad", csrf=False)
    assert bad.status_code == 422
