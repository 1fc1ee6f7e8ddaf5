"""Drill-down by an exact status code, and exports that name every active filter."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from alertstation.traffic.importer import import_lines
from tests.support import SignedIn
from tests.support import StationHarness as Station
from tests.traffic import accesslog

pytestmark = pytest.mark.usefixtures("clean_log")

AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"


def _import(engine: Engine) -> None:
    """Two 404s, one 401 and one 200 (one of the 404s by POST), an hour ago."""
    moment = (datetime.now(UTC) - timedelta(hours=1)).strftime(accesslog.TIME)
    lines = [
        f'198.51.100.1 - - [{moment}] "GET /missing HTTP/1.1" 404 10 "-" "{AGENT}"',
        f'198.51.100.2 - - [{moment}] "POST /missing HTTP/1.1" 404 10 "-" "{AGENT}"',
        f'198.51.100.3 - - [{moment}] "GET /locked HTTP/1.1" 401 10 "-" "{AGENT}"',
        f'198.51.100.4 - - [{moment}] "GET /alerts HTTP/1.1" 200 10 "-" "{AGENT}"',
    ]
    result = import_lines(engine, iter(x.encode() for x in lines), "combined", None)
    assert result.imported == 4


def test_a_status_code_filters_by_exactly_that_code(engine: Engine, admin: SignedIn) -> None:
    _import(engine)
    exact = admin.request("GET", "/api/traffic/dashboard", params={"days": "1", "status": "404"})
    assert exact.status_code == 200, exact.text
    assert exact.json["summary"]["hits"] == 2
    assert exact.json["filter_meta"]["filters"]["status"] == "404"
    assert [row["status"] for row in exact.json["status_codes"]] == [404]
    family = admin.request("GET", "/api/traffic/dashboard", params={"days": "1", "status": "4xx"})
    assert family.json["summary"]["hits"] == 3
    assert family.json["filter_meta"]["filters"]["status"] == "4xx"
    for bad in ("404x", "600", "44", "4x"):
        refused = admin.request("GET", "/api/traffic/dashboard", params={"status": bad})
        assert refused.status_code == 422, bad
        assert "status" in refused.json["error"]["message"]


def _sections(text: str) -> list[list[list[str]]]:
    sections: list[list[list[str]]] = []
    for row in csv.reader(io.StringIO(text)):
        if row and row[0].startswith("# "):
            sections.append([row])
        elif row:
            sections[-1].append(row)
    return sections


def test_the_csv_names_every_active_filter_in_its_title_and_first_section(
    station: Station, engine: Engine, admin: SignedIn
) -> None:
    _import(engine)
    params = {"days": "1", "status": "404", "method": "post", "path": "/missing"}
    answer = admin.request("GET", "/api/traffic/dashboard.csv", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-disposition"].endswith('_filtered.csv"')
    first = _sections(answer.text)[0]
    assert first[0] == ["# Report"]
    title = dict((row[0], row[1]) for row in first[1:])["title"]
    assert title.endswith("(UTC), filtered to path /missing, status 404, method POST"), title
    assert ["filter", "status", "404"] in first
    assert ["filter", "method", "POST"] in first
    assert ["filter", "path", "/missing"] in first
    summary = _sections(answer.text)[1]
    assert summary[0] == ["# Summary"] and ["hits", "1", "0"] in summary
    payload = admin.request("GET", "/api/traffic/dashboard", params=params).json
    assert payload["filter_meta"]["title"] == title

    whole = admin.request("GET", "/api/traffic/dashboard.csv", params={"days": "1"})
    assert not whole.headers["content-disposition"].endswith('_filtered.csv"')
    first = _sections(whole.text)[0]
    assert ["filters", "none"] in first
    assert first[1][1].endswith("(UTC), all traffic")
