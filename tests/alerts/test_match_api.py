"""The ``match`` object of /api/alerts and the public /api/alerts/{id}, on both backends."""

from __future__ import annotations

from typing import Any

import pytest

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.service import set_alert_settings
from alertstation.db.engine import begin_write
from tests.alerts.test_routes import NEW, alert_id, fixture, store, today
from tests.support import StationHarness


@pytest.fixture(autouse=True)
def noon_today(station: StationHarness) -> None:
    station.clock.now = station.clock.now.replace(hour=12, minute=0, second=0)


def area(station: StationHarness, *codes: str) -> None:
    with begin_write(station.engine) as conn:
        set_alert_settings(conn, zone_codes=list(codes))


def listed(station: StationHarness) -> dict[str, Any]:
    result = station.client.simulate_get("/api/alerts")
    assert result.status_code == 200
    (alert,) = result.json["alerts"]
    return alert


def test_list_items_carry_the_match(station: StationHarness) -> None:
    area(station, "OKC109", "040000")
    store(station, NEW, today(station))
    assert listed(station)["match"] == {
        "in_area": True,
        "reason": "code",
        "pairs": [
            ["040000", "040017"],
            ["OKC109", "040109"],  # the alert's code order, then the configured order
            ["040000", "040109"],
            ["040000", "OKC017"],
            ["OKC109", "OKC109"],
            ["040000", "OKC109"],
        ],
        "remaining_codes": ["040017", "040109", "OKC017", "OKC109"],
    }
    area(station, "OKZ016")
    alert = listed(station)
    assert alert["in_area"] is False
    assert alert["match"] == {
        "in_area": False,
        "reason": None,
        "pairs": [],
        "remaining_codes": ["040017", "040109", "OKC017", "OKC109"],
    }


def test_a_ugc_county_matches_an_alert_that_names_its_same_county(
    station: StationHarness,
) -> None:
    area(station, "OKC109")
    data = fixture(NEW, today(station)).replace(b"OKC017", b"OKZ017").replace(b"OKC109", b"OKZ109")
    import_messages(station.engine, data, NEW, now=station.clock())
    alert = listed(station)
    assert alert["in_area"] is True
    assert alert["match"]["reason"] == "county"
    assert alert["match"]["pairs"] == [["OKC109", "040109"]]
    area(station, "140109")  # a part of the county
    assert listed(station)["match"]["reason"] == "county part"


def test_one_alert_is_public_with_its_match(station: StationHarness) -> None:
    area(station, "040109")
    store(station, NEW, today(station))
    number = alert_id(station.engine)
    result = station.client.simulate_get(f"/api/alerts/{number}")
    assert result.status_code == 200
    assert result.json["id"] == number
    assert result.json["vtec"] == [
        f"/O.NEW.KOUN.SV.W.0045.{today(station)[2:].replace('-', '')}T2215Z-"
        f"{today(station)[2:].replace('-', '')}T2300Z/"
    ]
    assert result.json["match"]["reason"] == "code"
    assert result.json["match"]["pairs"] == [["040109", "040109"], ["040109", "OKC109"]]
    missing = station.client.simulate_get(f"/api/alerts/{number + 1000}")
    assert missing.status_code == 404
    assert missing.json["error"]["code"] == "not_found"
