"""The audit log page, its CSV and PDF exports and the chain check route."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import StationApp, create_app
from alertstation.audit.actor import Actor
from alertstation.audit.service import CHECKPOINT_FILE, list_events, load_checkpoint
from alertstation.audit.tables import audit_logs
from alertstation.db import begin_write
from alertstation.worker.jobs import JOBS
from tests.support import HeaderIdentity, make_settings, pg_required

ADMIN = {"X-Test-Role": "admin"}
ROW_ID = re.compile(r'data-event-id="(\d+)"')


@pytest.fixture
def app(db: Engine, tmp_path: Path) -> Iterator[StationApp]:
    settings = make_settings(tmp_path, db.url.render_as_string(hide_password=False))
    yield create_app(settings, engine=db, identity_middleware=[HeaderIdentity()])


@pytest.fixture
def client(app: StationApp) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(app)


def seed(app: StationApp, *batches: tuple[str, int]) -> None:
    """Append ``count`` rows of each ``action`` in order (later batches are newer)."""
    station = app.station
    actor = Actor(1, "alice", "192.0.2.10", "Mozilla/5.0 (X11; Linux)")
    with begin_write(station.engine) as conn:
        for action, count in batches:
            for n in range(count):
                fields = {"fields": ["smtp_password", f"field_{n}"]}
                station.ledger.record(
                    conn, actor, action, target=f"section-{n}", details=fields, propagate=True
                )


def test_the_action_filter_keeps_the_newest_matches_past_the_limit(
    app: StationApp, client: falcon.testing.TestClient
) -> None:
    seed(app, ("config.updated", 12), ("login success", 60))
    page = client.simulate_get(
        "/logs", params={"type": "audit", "action": "config.updated", "limit": "5"}, headers=ADMIN
    )
    assert page.status_code == 200
    assert [int(n) for n in ROW_ID.findall(page.text)] == [12, 11, 10, 9, 8]
    assert "smtp_password" in page.text and "192.0.2.10" in page.text
    unfiltered = client.simulate_get("/logs", params={"limit": "5"}, headers=ADMIN)
    assert [int(n) for n in ROW_ID.findall(unfiltered.text)] == [72, 71, 70, 69, 68]


def test_page_links_and_empty_states(app: StationApp, client: falcon.testing.TestClient) -> None:
    empty = client.simulate_get("/logs", headers=ADMIN)
    assert empty.status_code == 200 and "No audit events yet" in empty.text
    assert 'href="/logs?type=audit&amp;action=config.updated' in empty.text
    assert 'href="/logs"' in empty.text  # navigation entry
    seed(app, ("login failure", 1))
    none = client.simulate_get("/logs", params={"action": "config.updated"}, headers=ADMIN)
    assert "No “config.updated” events" in none.text
    assert "/logs/export.csv?type=audit&amp;action=config.updated" in none.text
    assert "/logs/export.pdf?type=audit&amp;action=config.updated" in none.text


@pytest.mark.parametrize(
    "params",
    [{"type": "web"}, {"type": "system"}, {"limit": "0"}, {"limit": "5001"}, {"limit": "x"}],
)
@pytest.mark.parametrize("path", ["/logs", "/logs/export.csv", "/logs/export.pdf"])
def test_bad_filters_are_a_422_envelope(
    client: falcon.testing.TestClient, path: str, params: dict[str, str]
) -> None:
    headers = {**ADMIN, "Accept": "application/json"}
    result = client.simulate_get(path, params=params, headers=headers)
    assert result.status_code == 422
    assert result.json["error"]["code"] == "invalid"


@pytest.mark.parametrize(
    ("role", "status"), [(None, 401), ("demo", 403), ("viewer", 200), ("admin", 200)]
)
@pytest.mark.parametrize("path", ["/logs", "/logs/export.csv", "/logs/export.pdf"])
def test_the_views_need_system_view_config(
    client: falcon.testing.TestClient, path: str, role: str | None, status: int
) -> None:
    headers = {"Accept": "application/json", **({"X-Test-Role": role} if role else {})}
    assert client.simulate_get(path, headers=headers).status_code == status


def test_csv_export_has_the_same_rows(app: StationApp, client: falcon.testing.TestClient) -> None:
    seed(app, ("config.updated", 4), ("login success", 10))
    actor = Actor(2, "=HYPERLINK(1)", "192.0.2.11", "-cmd")
    with begin_write(app.station.engine) as conn:
        app.station.ledger.record(conn, actor, "config.updated", details={"fields": ["a"]})
    result = client.simulate_get(
        "/logs/export.csv", params={"action": "config.updated", "limit": "3"}, headers=ADMIN
    )
    assert result.status_code == 200
    assert result.headers["content-type"].startswith("text/csv")
    assert "attachment" in result.headers["content-disposition"]
    parsed = list(csv.DictReader(io.StringIO(result.text)))
    assert [int(row["id"]) for row in parsed] == [15, 4, 3]
    assert {row["action"] for row in parsed} == {"config.updated"}
    assert parsed[0]["username"] == "'=HYPERLINK(1)" and parsed[0]["user_agent"] == "'-cmd"
    assert parsed[1]["created_at"].endswith("Z") and parsed[1]["client_ip"] == "192.0.2.10"
    assert '"smtp_password"' in parsed[1]["details"]


def pdf_tools() -> None:
    if shutil.which("pdfinfo") and shutil.which("pdftotext"):
        return
    message = "poppler-utils (pdfinfo, pdftotext) missing: run scripts/install-test-deps.sh"
    if pg_required():
        pytest.fail(message)
    pytest.skip(message)


def test_pdf_export_opens_paginates_and_names_the_actions(
    app: StationApp, client: falcon.testing.TestClient, tmp_path: Path
) -> None:
    pdf_tools()
    seed(app, ("config.updated", 150), ("login failure", 5))
    result = client.simulate_get(
        "/logs/export.pdf", params={"action": "config.updated", "limit": "120"}, headers=ADMIN
    )
    assert result.status_code == 200 and result.headers["content-type"] == "application/pdf"
    assert result.content.startswith(b"%PDF-")
    path = tmp_path / "audit.pdf"
    path.write_bytes(result.content)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.M).group(1))  # type: ignore[union-attr]
    assert pages >= 2 and "A4" in info.stdout
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "config.updated" in text and "login failure" not in text
    assert "action=config.updated" in text and f"Page {pages} of {pages}" in text
    assert text.count("Time (UTC)") == pages  # headings repeated on every page
    assert "section-149" in text and "section-30" in text and "section-29" not in text


def test_empty_pdf_still_renders(client: falcon.testing.TestClient, tmp_path: Path) -> None:
    pdf_tools()
    result = client.simulate_get("/logs/export.pdf", headers=ADMIN)
    path = tmp_path / "empty.pdf"
    path.write_bytes(result.content)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True).stdout
    assert "No audit events match" in text


def test_verify_route_reports_the_chain(app: StationApp, client: falcon.testing.TestClient) -> None:
    seed(app, ("login success", 3))
    ok = client.simulate_get("/api/audit/verify", headers=ADMIN)
    assert ok.json == {
        "ok": True,
        "rows": 3,
        "first_bad_id": None,
        "problem": None,
        "summary": "ok 3 rows",
    }
    with app.station.engine.begin() as conn:
        conn.execute(audit_logs.update().where(audit_logs.c.id == 2).values(client_ip="10.9.9.9"))
    broken = client.simulate_get("/api/audit/verify", headers=ADMIN).json
    assert (broken["ok"], broken["first_bad_id"]) == (False, 2)
    bad = client.simulate_get(
        "/api/audit/verify", params={"checkpoint": "asckpt1.1.1.x.y"}, headers=ADMIN
    )
    assert bad.status_code == 422


def test_list_events_pages_backwards(app: StationApp) -> None:
    seed(app, ("a", 3), ("b", 3))
    with app.station.engine.connect() as conn:
        assert [e.id for e in list_events(conn, limit=2, before_id=5)] == [4, 3]
        assert [e.id for e in list_events(conn, action="a", before_id=3)] == [2, 1]
        assert list_events(conn, action="b")[0].details_text == "fields: smtp_password, field_2"


def test_the_worker_job_writes_checkpoints_into_the_data_dir(app: StationApp) -> None:
    job = next(job for job in JOBS if job.name == "audit-checkpoint")
    seed(app, ("login success", 2))
    job.run(app.station)
    job.run(app.station)
    path = app.station.settings.data_dir / CHECKPOINT_FILE
    assert len(path.read_text().splitlines()) == 1
    checkpoint = load_checkpoint(str(path))
    assert app.station.ledger.verify_now(app.station.engine, checkpoint).summary() == "ok 2 rows"
