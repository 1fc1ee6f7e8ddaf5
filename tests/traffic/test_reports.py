"""Every report, on both backends, against a plain-Python computation over the same rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine

from alertstation.traffic import reports, rollups
from alertstation.traffic.period import Filters, Period, parse_period
from alertstation.traffic.tables import web_request_logs
from tests.support import Clock, SignedIn
from tests.support import StationHarness as Station
from tests.traffic import oracle

LIMIT = 10_000  # past every list's length: the lists are compared whole
FILTERS = [
    Filters(),
    Filters(country="US"),
    Filters(path="/alerts"),
    Filters(status=4),
    Filters(status_code=404),
    Filters(browser="Chrome"),
    Filters(os="Linux"),
    Filters(method="POST"),
]


@pytest.fixture
def generated(engine: Engine, clean_log: None) -> Iterator[tuple[Clock, list[dict[str, Any]]]]:
    """Rows over the 20 days before now, stored; yields the clock and the rows with their ids."""
    clock = Clock()
    rows = oracle.generate(clock())
    with engine.begin() as conn:
        for start in range(0, len(rows), 200):
            conn.execute(web_request_logs.insert().values(rows[start : start + 200]))
        stored = [dict(row._mapping) for row in conn.execute(web_request_logs.select())]
    # Complete hours come from the rollups, the current one from raw rows.
    assert rollups.ensure_rolled_up(engine, clock()) > 0
    yield clock, stored


def listed(items: list[dict[str, Any]], keys: tuple[str, ...]) -> list[tuple[Any, ...]]:
    hits = [item["hits"] for item in items]
    assert hits == sorted(hits, reverse=True)  # most hits first
    return sorted(
        tuple(item[key] for key in keys) + (item["hits"], item["visitors"], item["bytes"])
        for item in items
    )


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: str(f.as_dict()))
def test_every_report_agrees_with_the_plain_python_computation(
    engine: Engine, generated: tuple[Clock, list[dict[str, Any]]], filters: Filters
) -> None:
    clock, rows = generated
    period = parse_period({"days": "10"}, clock().date())
    mine = oracle.select_rows(rows, period, filters)
    assert mine or filters.os or filters.method  # the data exercises the filters
    with engine.connect() as conn:
        payload = reports.dashboard(conn, period, filters, limit=LIMIT)
    expected = oracle.summary(mine)
    got = payload["summary"]
    assert got["avg_visit_seconds"] == pytest.approx(expected.pop("avg_visit_seconds"), abs=0.11)
    assert {k: v for k, v in got.items() if k != "avg_visit_seconds"} == expected
    previous = oracle.summary(oracle.select_rows(rows, period.previous(), filters))
    assert payload["summary_prev"]["hits"] == previous["hits"]
    assert payload["summary_prev"]["visits"] == previous["visits"]
    for name, (keys, _) in reports.GROUPS.items():
        keep = {
            "top_pages": lambda row: row["page_view"],
            "robots": lambda row: row["is_bot"],
            "top_error_urls": lambda row: row["status"] >= 400,
            "region_breakdown": lambda row: row["region"] is not None,
        }.get(name, lambda row: True)
        assert listed(payload[name], keys) == oracle.group(mine, keys, keep), name
    entries, exits = oracle.entry_exit(mine)
    assert sorted((e["path"], e["visits"]) for e in payload["entry_pages"]) == entries
    assert sorted((e["path"], e["visits"]) for e in payload["exit_pages"]) == exits
    sources = oracle.error_sources(mine)
    assert {s["ip"] for s in payload["top_error_sources"]} == set(sources)
    for source in payload["top_error_sources"]:
        errors, best, at_best = sources[source["ip"]]
        assert (source["errors"], source["top_count"]) == (errors, best)
        assert (source["top_path"], source["top_status"]) in at_best
    assert sorted(
        (s["method"], s["path"], s["hits"], s["avg_ms"]) for s in payload["slowest_endpoints"]
    ) == oracle.slowest(mine)
    assert [
        (d["date"], d["hits"], d["page_views"], d["visitors"], d["bytes"])
        for d in payload["time_series"]
    ] == oracle.by_day(mine, period)
    grid = oracle.weekday_hour(mine)
    assert payload["weekday_hour"] == grid
    assert payload["hits_by_hour"] == [sum(row[h] for row in grid) for h in range(24)]
    assert payload["hits_by_weekday"] == [sum(row) for row in grid]
    logins = [r for r in mine if r["method"] == "POST" and r["path"] == "/auth/login"]
    security = payload["login_security"]
    assert security["attempts"] == len(logins)
    assert security["failures"] == sum(r["status"] >= 400 for r in logins)
    assert security["successes"] == sum(200 <= r["status"] < 300 for r in logins)
    assert payload["bandwidth"]["total_bytes"] == expected["bandwidth_bytes"]


def test_a_start_end_period_includes_its_end_day(
    engine: Engine, generated: tuple[Clock, list[dict[str, Any]]]
) -> None:
    clock, rows = generated
    today = clock().date()
    period = parse_period(
        {
            "start": (today.replace(day=1) if today.day > 3 else today).isoformat(),
            "end": today.isoformat(),
        },
        today,
    )
    one_day = Period(today, today)
    with engine.connect() as conn:
        assert reports.summary(conn, one_day, Filters())["hits"] == len(
            oracle.select_rows(rows, one_day, Filters())
        )
        assert reports.summary(conn, period, Filters())["hits"] == len(
            oracle.select_rows(rows, period, Filters())
        )


def test_the_dashboard_route_needs_sign_in_and_validates_the_period(
    station: Station, admin: SignedIn
) -> None:
    path = "/api/traffic/dashboard"
    assert station.client.simulate_get(path).status_code == 401
    station.add_user("dee", "demo")
    result = station.sign_in("dee").request("GET", path, params={"days": "3"})
    assert result.status_code == 200
    summary = result.json["summary"]
    assert set(summary) == {
        "hits",
        "page_views",
        "unique_visitors",
        "visits",
        "bounce_rate",
        "avg_visit_seconds",
        "bandwidth_bytes",
    }
    assert set(result.json["summary_prev"]) == set(summary)
    meta = result.json["filter_meta"]
    today = station.clock().date()
    assert meta["period"] == {
        "start": str(today.fromordinal(today.toordinal() - 2)),
        "end": str(today),
        "days": 3,
    }
    for params in (
        {"days": "0"},
        {"days": "x"},
        {"start": "2026-01-02"},
        {"start": "2026-01-05", "end": "2026-01-01"},
        {"start": "2026-13-01", "end": "2026-12-01"},
        {"days": "3", "status": "6xx"},
    ):
        bad = admin.request("GET", path, params=params)
        assert bad.status_code == 422, params
        assert bad.json["error"]["code"] == "invalid"
