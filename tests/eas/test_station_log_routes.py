"""The station log over HTTP: GET /api/eas/log by month (422 for a malformed one), the page in
the menu, notes, corrections and reviews (eas.broadcast, CSRF, audited as eas.log.*), no route
that edits or deletes an entry, and the month's CSV and PDF for an inspector (the PDF opened
with pdfinfo and read back with pdftotext).

Both backends, the station's injected clock.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
import pytest

from alertstation.db.engine import begin_write
from alertstation.eas.log import record_entry
from alertstation.http.routing import permission
from alertstation.settings_admin import sections
from tests.eas.test_forward_support import audit_rows
from tests.support import SignedIn, StationHarness

TOR = "ZCZC-WXR-TOR-039137+0030-3251200-WXYZ/FM -"
RWT = "ZCZC-EAS-RWT-039137+0015-3301400-WXYZ/FM -"
JSON = {"Accept": "application/json"}


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    """One signed-in operator (each sign-in hashes a password; a viewer's 403 on every
    state-changing route is held by tests/http/test_routing.py)."""
    station.add_user("chief", "operator")
    return station.sign_in("chief")


def fill_november(station: StationHarness) -> list[int]:
    """Log entries across November 2026 in New York time, one just past each end."""
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.APPLICATION,
            {"time_zone": "America/New_York"},
            updated_by="t",
            now=station.clock.now,
        )
        moments = [
            datetime(2026, 11, 1, 3, 59, tzinfo=UTC),  # 31 October, 23:59 EDT: not November
            datetime(2026, 11, 1, 4, 0, tzinfo=UTC),  # 1 November, midnight EDT
            datetime(2026, 11, 21, 17, 0, tzinfo=UTC),
            datetime(2026, 11, 26, 19, 0, tzinfo=UTC),
            datetime(2026, 12, 1, 4, 59, tzinfo=UTC),  # 30 November, 23:59 EST
            datetime(2026, 12, 1, 5, 0, tzinfo=UTC),  # 1 December: not November
        ]
        ids = [
            record_entry(
                conn,
                "received" if n % 2 else "test_received",
                at=moment,
                source=f"audio:{n % 2 + 1}",
                header=TOR if n % 2 else RWT,
                result="new",
                details={"bursts": 3},
            )
            for n, moment in enumerate(moments)
        ]
    return ids


def test_the_api_and_page_show_a_month_in_the_station_s_time_zone_with_filters(
    station: StationHarness, operator: SignedIn
) -> None:
    ids = fill_november(station)
    november = operator.request("GET", "/api/eas/log", params={"month": "2026-11"})
    assert november.status_code == 200, november.text
    body = november.json
    assert [item["id"] for item in body["items"]] == ids[1:5]
    assert (body["month"], body["time_zone"]) == ("2026-11", "America/New_York")
    assert body["items"][1]["text"].startswith("An EAS Participant has issued")
    tests = operator.request(
        "GET", "/api/eas/log", params={"month": "2026-11", "kind": "test_received"}
    ).json
    assert [item["id"] for item in tests["items"]] == [ids[2], ids[4]]
    by_source = operator.request(
        "GET", "/api/eas/log", params={"month": "2026-11", "source": "audio:2", "event": "tor"}
    ).json
    assert [item["id"] for item in by_source["items"]] == [ids[1], ids[3]]
    local = station.clock.now.astimezone(ZoneInfo("America/New_York"))
    assert operator.request("GET", "/api/eas/log").json["month"] == f"{local:%Y-%m}"
    for bad in ({"month": "2026-13"}, {"month": "Nov"}, {"kind": "gone"}, {"event": "TORN"}):
        answer = operator.request("GET", "/api/eas/log", params=bad)
        assert answer.status_code == 422, bad
        assert answer.json["error"]["code"] == "invalid"
        assert set(answer.json["error"]) >= {"code", "message"}

    page = operator.request("GET", "/eas/log", params={"month": "2026-11"})
    assert page.status_code == 200, page.text
    assert 'href="/eas/log"' in page.text
    assert f'id="log-{ids[1]}"' in page.text and f'id="log-{ids[0]}"' not in page.text
    assert "2026-11-30 23:59 EST (2026-12-01 04:59 UTC)" in page.text
    assert "Required Weekly Test" in page.text
    assert 'type="month" value="2026-11"' in page.text and "Add a note" in page.text
    assert operator.request("GET", "/eas/log?month=2026-1").status_code == 422
    # A missed-test alarm's "record the reason" opens the note form filled in.
    reason = operator.request("GET", "/eas/log?topic=missed_test&note_source=audio:7").text
    assert '<option value="missed_test" selected>' in reason and 'value="audio:7"' in reason


def test_notes_corrections_and_reviews_need_eas_broadcast_and_are_audited(
    station: StationHarness, operator: SignedIn
) -> None:
    now = station.clock.now
    note = {"topic": "missed_test", "text": "No RWT from WXYZ this week", "source": "audio:1"}
    assert station.app.registry.lookup("/api/eas/log/notes", "POST").access == permission(
        "eas.broadcast"
    )
    no_csrf = operator.request("POST", "/api/eas/log/notes", json=note, csrf=False)
    assert no_csrf.status_code == 403 and no_csrf.json["error"]["code"] == "csrf_failed"

    added = operator.request("POST", "/api/eas/log/notes", json=note)
    assert added.status_code == 201, added.text
    entry = added.json["entry"]
    assert (entry["kind"], entry["result"], entry["by"], entry["source"]) == (
        "note",
        "missed_test",
        "chief",
        "audio:1",
    )
    out = operator.request(
        "POST",
        "/api/eas/log/notes",
        json={
            "topic": "out_of_service",
            "text": "Decoder sent for repair",
            "occurred_at": (now - timedelta(hours=3)).isoformat(),
        },
    )
    assert out.status_code == 201, out.text
    assert out.json["entry"]["at"] == (now - timedelta(hours=3)).isoformat()
    future = (now + timedelta(hours=1)).isoformat()
    for bad in (
        {"topic": "gossip", "text": "x"},
        {"topic": "other", "text": ""},
        {"topic": "other", "text": "x", "occurred_at": future},
        {"topic": "other", "text": "x", "occurred_at": "yesterday"},
    ):
        answer = operator.request("POST", "/api/eas/log/notes", json=bad)
        assert answer.status_code == 422, bad

    fixed = operator.request(
        "POST",
        "/api/eas/log/corrections",
        json={"corrects": entry["id"], "text": "The RWT arrived on the backup receiver"},
    )
    assert fixed.status_code == 201, fixed.text
    assert fixed.json["entry"]["corrects_id"] == entry["id"]
    missing = operator.request(
        "POST", "/api/eas/log/corrections", json={"corrects": 999999, "text": "x"}
    )
    assert missing.status_code == 404

    local = now.astimezone(UTC).date()
    sunday = local - timedelta(days=(local.isoweekday() % 7))
    week = operator.request(
        "POST", "/api/eas/log/reviews", json={"period": "week", "week_start": sunday.isoformat()}
    )
    assert week.status_code == 201, week.text
    month = operator.request(
        "POST", "/api/eas/log/reviews", json={"period": "month", "month": f"{local:%Y-%m}"}
    )
    assert month.status_code == 201, month.text
    monday = sunday + timedelta(days=1)
    for bad in (
        {"period": "week", "week_start": monday.isoformat()},
        {"period": "week", "week_start": (sunday + timedelta(days=7)).isoformat()},
        {"period": "year"},
        {"period": "month", "month": "2026-13"},
    ):
        assert operator.request("POST", "/api/eas/log/reviews", json=bad).status_code == 422, bad

    listed = operator.request("GET", "/api/eas/log").json
    kinds = [item["kind"] for item in listed["items"]]
    assert sorted(kinds) == ["correction", "note", "note", "review", "review"]
    noted = next(item for item in listed["items"] if item["id"] == entry["id"])
    assert noted["corrected_by"] == [fixed.json["entry"]["id"]]
    assert len(listed["reviews"]) == 2
    (reviewed_week, reviewed_month) = audit_rows(station.engine, "eas.log.reviewed")
    assert orjson.loads(reviewed_week.details)["first_day"] == sunday.isoformat()
    assert reviewed_month.username == "chief"
    assert len(audit_rows(station.engine, "eas.log.note")) == 2
    assert len(audit_rows(station.engine, "eas.log.correction")) == 1

    # No route edits or deletes an entry.
    for method in ("PUT", "PATCH", "DELETE"):
        assert operator.request(method, "/api/eas/log", json={}).status_code == 405
        assert operator.request(method, f"/api/eas/log/{entry['id']}").status_code in (404, 405)
    routes = {(r.method, r.path) for r in station.app.registry}
    assert {path for method, path in routes if path.startswith(("/api/eas/log", "/eas/log"))} == {
        "/eas/log",
        "/eas/log/export.csv",
        "/eas/log/export.pdf",
        "/api/eas/log",
        "/api/eas/log/notes",
        "/api/eas/log/corrections",
        "/api/eas/log/reviews",
    }


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils not installed")
def test_the_month_s_pdf_opens_and_holds_every_entry_and_the_reviews(
    station: StationHarness, operator: SignedIn, tmp_path: Path
) -> None:
    ids = fill_november(station)
    with begin_write(station.engine) as conn:
        for n in range(40):  # enough for several pages
            ids.append(
                record_entry(
                    conn,
                    "note",
                    at=datetime(2026, 11, 10, 12, n, tzinfo=UTC),
                    text=f"Equipment check number {n}",
                    by="chief",
                )
            )
    review = operator.request(
        "POST", "/api/eas/log/reviews", json={"period": "month", "month": "2026-11"}
    )
    assert review.status_code == 201, review.text
    reviewed = station.clock.now.astimezone(ZoneInfo("America/New_York"))
    viewer = operator
    answer = viewer.request("GET", "/eas/log/export.pdf", params={"month": "2026-11"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/pdf"
    assert "eas-station-log-2026-11.pdf" in answer.headers["content-disposition"]
    pdf = tmp_path / "log.pdf"
    pdf.write_bytes(answer.content)
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    assert "Pages:" in info.stdout and "EAS station log" in info.stdout
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    november = viewer.request("GET", "/api/eas/log", params={"month": "2026-11"}).json["items"]
    assert len([item for item in november if item["kind"] != "review"]) == 44
    for item in november:
        assert f"#{item['id']} " in text, item
        if item["header"]:
            assert item["header"].strip() in text
    assert f"#{ids[0]} " not in text and f"#{ids[5]} " not in text  # October, December
    assert "Sunday, November 1, 2026" in text and "Monday, November 30, 2026" in text
    assert "23:59:00 EST (2026-12-01 04:59:00 UTC)" in text
    assert f"Reviewed by chief at {reviewed:%Y-%m-%d %H:%M:%S %Z}" in text

    csv_answer = viewer.request("GET", "/eas/log/export.csv", params={"month": "2026-11"})
    assert csv_answer.status_code == 200
    lines = csv_answer.text.splitlines()
    assert lines[0].startswith("day,local_time,utc_time,id,kind")
    assert lines[1].startswith("2026-11-01,00:00:00 EDT,2026-11-01 04:00:00 UTC")
    assert any(line.startswith("2026-11-02,,,,") and "No entries" in line for line in lines)
    assert viewer.request("GET", "/eas/log/export.pdf?month=bad").status_code == 422
