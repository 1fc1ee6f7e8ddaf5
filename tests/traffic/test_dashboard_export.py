"""The dashboard's CSV (formula cells neutralised) and what the demo role is shown."""

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
VISITOR = "198.51.100.23"
VISITOR6 = "2001:db8:1234:5678::1"


def _import(engine: Engine) -> None:
    moment = (datetime.now(UTC) - timedelta(hours=1)).strftime(accesslog.TIME)
    referrer = "https://www.google.com/search?q=%3DHYPERLINK(%22x%22)"  # the phrase: =HYPERLINK
    lines = [
        f'{VISITOR} - - [{moment}] "GET /alerts HTTP/1.1" 200 10 "{referrer}" "{AGENT}"',
        f'{VISITOR6} - - [{moment}] "GET /-cmd HTTP/1.1" 404 10 "-" "{AGENT}"',
        f'{VISITOR} - - [{moment}] "POST /auth/login HTTP/1.1" 401 10 "-" "@SUM(1+1)"',
    ]
    result = import_lines(engine, iter(x.encode() for x in lines), "combined", None)
    assert result.imported == 3


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_the_dashboard_csv_neutralises_formula_cells(
    station: Station, engine: Engine, admin: SignedIn
) -> None:
    _import(engine)
    answer = admin.request("GET", "/api/traffic/dashboard.csv", params={"days": "1"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-disposition"].startswith('attachment; filename="traffic_')
    cells = _cells(answer.text)
    assert "# Summary" in cells and "# Keyphrases" in cells
    assert '\'=HYPERLINK("x")' in cells
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")]
    assert VISITOR in cells, "other roles see whole addresses"


def test_the_demo_role_sees_no_usernames_and_no_whole_addresses(
    station: Station, engine: Engine, admin: SignedIn
) -> None:
    _import(engine)
    station.add_user("ops", "operator")
    tried = station.client.simulate_post(
        "/auth/login",
        json={"username": "alice-the-admin", "password": "not her password"},
        remote_addr="203.0.113.77",
    )
    assert tried.status_code == 401
    station.clock.advance(minutes=2)  # the Security Center's windows end at a whole minute
    station.add_user("guest", "demo")
    guest = station.sign_in("guest")
    answers = {
        path: guest.request("GET", path, params=params)
        for path, params in (
            ("/security/center/logins", {"days": "1"}),
            ("/security/center/traffic", {"days": "1"}),
            ("/api/traffic/dashboard", {"days": "1"}),
            ("/api/traffic/dashboard.csv", {"days": "1"}),
        )
    }
    for path, answer in answers.items():
        assert answer.status_code == 200, (path, answer.text)
        for secret in ("alice-the-admin", "203.0.113.77", VISITOR, "2001:db8:1234:5678"):
            assert secret not in answer.text, (path, secret)
    logins = answers["/security/center/logins"].json
    assert logins["recent"][0]["username"] == "(hidden)"
    assert logins["recent"][0]["address"] == "203.0.113.0"
    assert "198.51.100.0" in answers["/api/traffic/dashboard"].text
    assert "2001:db8:1234::" in answers["/api/traffic/dashboard"].text
    assert "198.51.100.0" in _cells(answers["/api/traffic/dashboard.csv"].text)
    seen_by_admin = admin.request("GET", "/security/center/logins", params={"days": "1"})
    assert "alice-the-admin" in seen_by_admin.text and "203.0.113.77" in seen_by_admin.text
