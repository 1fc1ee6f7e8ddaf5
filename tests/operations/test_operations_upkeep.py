"""The backup download, database optimisation and the upgrade page."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path

from sqlalchemy import select, text

from alertstation.audit.tables import audit_logs
from alertstation.auth.tables import users
from alertstation.operations.upkeep import changelog_since_previous
from alertstation.version import __version__
from tests.support import StationHarness as Station

JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html"}
ROOT = Path(__file__).resolve().parents[2]


def test_backup_page_warns_and_downloads_an_archive(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    page = boss.request("GET", "/admin/operations/backup", headers=HTML)
    assert page.status_code == 200 and "password hashes" in page.text
    assert 'name="include_keys"' in page.text

    plain = boss.request("POST", "/admin/operations/backup", json={})
    assert plain.status_code == 200, plain.text
    assert plain.headers["content-type"] == "application/gzip"
    assert "attachment" in plain.headers["content-disposition"]
    with tarfile.open(fileobj=io.BytesIO(plain.content)) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert not any(n.startswith("keys/") for n in names)
    assert manifest["row_counts"]["users"] == 1 and manifest["includes_keys"] is False
    assert manifest["includes_secrets"] is True and manifest["left_out"] == []

    keyed = boss.request("POST", "/admin/operations/backup", json={"include_keys": True})
    with tarfile.open(fileobj=io.BytesIO(keyed.content)) as tar:
        key = tar.extractfile("keys/audit_ledger_key").read().decode()  # type: ignore[union-attr]
    assert key == station.app.station.settings.audit_ledger_key
    with station.engine.connect() as conn:
        rows = conn.execute(
            select(audit_logs.c.username, audit_logs.c.details)
            .where(audit_logs.c.action == "backup.downloaded")
            .order_by(audit_logs.c.id)
        ).all()
    assert [(r.username, json.loads(r.details)) for r in rows] == [
        ("boss", {"include_keys": False, "include_secrets": True}),
        ("boss", {"include_keys": True, "include_secrets": True}),
    ]


def test_only_an_admin_may_take_the_keys(station: Station) -> None:
    station.add_user("ops", "operator")
    ops = station.sign_in("ops")
    page = ops.request("GET", "/admin/operations/backup", headers=HTML)
    assert page.status_code == 200 and 'name="include_keys"' not in page.text
    assert "no password hashes, session tokens or stored secrets" in page.text
    refused = ops.request("POST", "/admin/operations/backup", json={"include_keys": True})
    assert refused.status_code == 403 and refused.json["error"]["code"] == "admin_only"
    archive = ops.request("POST", "/admin/operations/backup", json={})
    assert archive.status_code == 200
    # An operator's backup leaves out password hashes, session tokens and stored secrets.
    with station.engine.connect() as conn:
        hashes = [row.password_hash for row in conn.execute(select(users.c.password_hash))]
    with tarfile.open(fileobj=io.BytesIO(archive.content)) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        members = b"".join(
            tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
        )
    assert manifest["includes_secrets"] is False and "password hashes" in manifest["left_out"]
    assert hashes and not any(h.encode() in members for h in hashes)


def test_viewer_may_not_back_up_or_optimize(station: Station) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    for method, path in (
        ("GET", "/admin/operations/backup"),
        ("POST", "/admin/operations/backup"),
        ("POST", "/admin/optimize_db"),
        ("GET", "/admin/operations/upgrade"),
    ):
        assert viewer.request(method, path, json={}).status_code == 403, path


def test_optimize_reports_sizes_and_shrinks_after_a_delete(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    engine = station.engine
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE IF NOT EXISTS optimize_probe (body TEXT)"))
        for _ in range(200):
            conn.execute(text("INSERT INTO optimize_probe VALUES (:b)"), {"b": "x" * 4000})
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM optimize_probe"))
    try:
        result = boss.request("POST", "/admin/optimize_db", headers=JSON)
        assert result.status_code == 200, result.text
        report = result.json
        assert report["size_before"] > 0 and report["size_after"] > 0
        if report["backend"] == "sqlite":
            assert report["steps"] == ["ANALYZE", "VACUUM", "REINDEX"]
            assert report["size_after"] < report["size_before"]  # VACUUM gave pages back
        else:
            assert report["steps"] == ["VACUUM (ANALYZE)"]
        page = boss.request("POST", "/admin/optimize_db", headers=HTML)
        assert page.status_code == 200 and "bytes before" in page.text
    finally:
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE optimize_probe"))


def test_upgrade_page_shows_version_schema_history_and_steps(station: Station) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    info = boss.request("GET", "/admin/operations/upgrade", headers=JSON).json
    assert info["up_to_date"] is True and info["revision"] == info["head"]
    revisions = [m["revision"] for m in info["migrations"]]
    assert revisions[0] == info["head"] and "20261124_operations_settings" in revisions
    assert all(m["applied"] for m in info["migrations"])
    assert any("alertstation migrate" in step for step in info["steps"])
    assert info["release_notes_found"] is True and info["release_notes"].startswith("## ")
    assert "changelog" not in info
    page = boss.request("GET", "/admin/operations/upgrade", headers=HTML)
    assert page.status_code == 200 and info["head"] in page.text


def test_upgrade_page_shows_the_operator_release_notes_not_the_changelog(
    station: Station,
) -> None:
    station.add_user("boss", "admin")
    boss = station.sign_in("boss")
    page = boss.request("GET", "/admin/operations/upgrade", headers=HTML)
    assert page.status_code == 200
    text = page.text
    notes = text[
        text.index('id="release-notes"') : text.index(
            "</section>", text.index('id="release-notes"')
        )
    ]
    # The release notes of this version, rendered, under the page's own heading.
    assert f"<h3>{__version__}</h3>" in notes or "<h3>Unreleased</h3>" in notes
    assert "<h4>To do when upgrading</h4>" in notes
    assert "<code>alertstation migrate</code>" in notes
    assert 'href="/docs/release-notes"' in text and 'href="/docs/upgrade"' in text
    # Nothing of the developer changelog: its sections, module names, source paths.
    assert "### Tests" not in text and "<h4>Tests</h4>" not in notes
    assert re.search(r"\balertstation\.[a-z_]+\.|\bsrc/|\.py\b|\.pyx\b|CHANGELOG", notes) is None
    changelog = (ROOT / "CHANGELOG.md").read_text()
    first_entry = changelog.split("\n- ", 1)[1].split("\n", 1)[0]
    assert first_entry[:40] not in text


def test_changelog_section_is_this_version_and_unreleased() -> None:
    changelog = (
        "# Changelog\n\n## Unreleased\n- next\n\n## 2.6.0 - 2026-11-24\n- six\n\n"
        "## 2.5.0 - 2026-11-21\n- five\n"
    )
    section = changelog_since_previous(changelog, "2.6.0")
    assert "- next" in section and "- six" in section and "five" not in section
    assert changelog_since_previous(changelog, "9.9.9").startswith("## Unreleased")
    assert changelog_since_previous("# nothing\n", "2.6.0") == ""
