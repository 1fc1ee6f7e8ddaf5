"""/support, the diagnostics bundle (admins only, no secrets) and /repo-stats."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.alerts.poll.tables import poll_sources
from alertstation.db.engine import begin_write
from alertstation.db.migrate import head_revision
from alertstation.logs import configure_logging
from alertstation.operations.public.diagnostics import REDACTED, scrub
from alertstation.operations.public.errorlog import recent_errors
from alertstation.operations.public.repo_stats import (
    changelog_excerpt,
    changelog_path,
    kernel_names,
)
from alertstation.settings import ENV_FILE
from alertstation.version import __version__
from alertstation.worker.heartbeat import beat
from tests.support import StationHarness

ROOT = Path(__file__).resolve().parents[2]
DB_PASSWORD = "pg-pass-Xq81zz"
FEED_PASSWORD = "feed-pass-Lm27kk"


def test_support_page_is_public_and_offers_the_bundle_to_admins_only(
    station: StationHarness,
) -> None:
    anonymous = station.client.simulate_get("/support")
    assert anonymous.status_code == 200
    assert "Reporting a problem" in anonymous.text
    assert 'href="/support/diagnostics"' not in anonymous.text
    station.add_user("boss", "admin")
    admin = station.sign_in("boss").request("GET", "/support")
    assert 'href="/support/diagnostics"' in admin.text


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_diagnostics_bundle_is_for_admins_only(station: StationHarness, role: str) -> None:
    assert station.client.simulate_get("/support/diagnostics").status_code == 401
    station.add_user("someone", role)
    assert station.sign_in("someone").request("GET", "/support/diagnostics").status_code == 403


def _plant_secrets(station: StationHarness, engine: Engine) -> list[str]:
    """Put every kind of secret where a careless bundle would pick it up; return them."""
    settings = station.app.station.settings
    (settings.data_dir / ENV_FILE).write_text(
        f"DATABASE_URL=postgresql://station:{DB_PASSWORD}@db.example/alerts\n"
    )
    now = station.clock()
    with begin_write(engine) as conn:
        conn.execute(
            poll_sources.insert().values(
                name="feed",
                kind="cap",
                url=f"https://reader:{FEED_PASSWORD}@feeds.example/alerts.xml",
                area="",
                zones="",
                created_at=now,
                updated_at=now,
                last_attempt_at=now,
                consecutive_failures=1,
                last_error=f"connect failed for https://reader:{FEED_PASSWORD}@feeds.example/x"
                f" key={settings.secret_key}",
            )
        )
    logging.getLogger("alertstation.tests").error(
        "could not reach postgresql://station:%s@db.example (ledger %s)",
        DB_PASSWORD,
        settings.audit_ledger_key,
    )
    return [settings.secret_key, settings.audit_ledger_key, DB_PASSWORD, FEED_PASSWORD]


def test_diagnostics_bundle_holds_the_facts_and_no_secret(
    station: StationHarness, engine: Engine
) -> None:
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    admin.request("GET", "/support/diagnostics")  # the error ring is installed by now
    secrets = _plant_secrets(station, engine)
    beat(station.app.station)

    result = admin.request("GET", "/support/diagnostics")
    assert result.status_code == 200
    assert "attachment" in result.headers["content-disposition"]
    assert "alertstation-diagnostics-" in result.headers["content-disposition"]
    for secret in secrets:
        assert secret not in result.text
    bundle = result.json
    assert bundle["versions"]["alertstation"] == __version__
    assert bundle["versions"]["libraries"]["sqlalchemy"]
    assert bundle["database"]["schema_revision"] == head_revision(engine)
    assert bundle["database"]["pending_migrations"] == []
    assert bundle["worker_heartbeat"]["state"] == "running"
    (source,) = bundle["poll_sources"]
    assert source["url"].startswith("https://") and "feeds.example" in source["url"]
    assert REDACTED in source["last_error"]
    assert "could not reach" in bundle["recent_errors"][0]["message"]
    assert REDACTED in bundle["recent_errors"][0]["message"]
    assert bundle["settings"]["secrets_set"] == {"SECRET_KEY": True, "AUDIT_LEDGER_KEY": True}


def test_scrub_removes_url_credentials_and_json_escaped_secrets() -> None:
    assert scrub("see ftp://u:p@h/x and https://tok@h", []) == (
        f"see ftp://{REDACTED}@h/x and https://{REDACTED}@h"
    )
    assert scrub('{"m": "a\\"quoted\\"b"}', ['a"quoted"b']) == f'{{"m": "{REDACTED}"}}'


def test_repo_stats_shows_version_schema_kernels_and_changelog(
    client: falcon.testing.TestClient, engine: Engine
) -> None:
    result = client.simulate_get("/repo-stats")
    assert result.status_code == 200
    html = result.text
    assert f'<dd id="running-version">{__version__}</dd>' in html
    assert f"<code>{head_revision(engine)}</code>" in html
    names = kernel_names()
    assert {"geomatch", "same_decode"} <= set(names)
    for name in names:
        assert f'data-kernel="{name}"' in html
    assert html.count(">compiled</span>") == len(names)
    assert 'id="changelog"' in html
    # The page renders the excerpt of the real changelog, whatever it holds today.
    path = changelog_path()
    assert path is not None
    excerpt = changelog_excerpt(path.read_text(encoding="utf-8"), __version__)
    heading = next(line[4:] for line in excerpt.splitlines() if line.startswith("### "))
    assert f"<h3>{heading}</h3>" in html


CHANGELOG = """# Changelog

## Unreleased

### Added
- a new thing

## 2.1.0 - 2026-01-01

### Fixed
- an old bug

## 2.0.0 - 2025-01-01

- older
"""


def test_changelog_excerpt_picks_unreleased_and_the_running_version() -> None:
    excerpt = changelog_excerpt(CHANGELOG, "2.0.0")
    assert "a new thing" in excerpt and "older" in excerpt and "old bug" not in excerpt
    newest = changelog_excerpt(CHANGELOG, "9.9.9")
    assert "## 2.1.0" in newest and "2.0.0" not in newest
    empty_unreleased = CHANGELOG.replace("### Added\n- a new thing\n", "")
    assert "Unreleased" not in changelog_excerpt(empty_unreleased, "2.1.0")
    assert changelog_excerpt(CHANGELOG, "2.1.0", lines=3).endswith("…")


def test_the_error_ring_survives_a_logging_reconfiguration() -> None:
    logger = logging.getLogger("alertstation")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    try:
        ring = recent_errors()
        configure_logging("INFO", "json", stream=io.StringIO())
        logging.getLogger("alertstation.tests").error("after reconfiguration %s", "marker-7Qx")
        assert ring in logger.handlers
        assert ring.entries()[0]["message"] == "after reconfiguration marker-7Qx"
        logger.removeHandler(ring)
        assert recent_errors() is ring and ring in logger.handlers
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
