"""Configured IPAWS trust anchors: every ingest path checks signatures and the store keeps the
outcome (verified / unsigned / failed with the reason), on both backends.

A throwaway CA signs the sample alerts; its certificate is the bundle named by
``ALERTSTATION_IPAWS_TRUST_ANCHORS``. The signing certificate is valid around the test clock, and
signatures are checked at the time of receipt (the clock given to the import), so nothing here
depends on the wall clock.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import Engine, select

from alertstation.alerts.ingest import import_messages
from alertstation.alerts.poll.poller import Poller, poll_job, wait_for_poll_job
from alertstation.alerts.poll.sources import create_source, read_config
from alertstation.alerts.service import ImportProblem, set_alert_settings
from alertstation.alerts.tables import cap_alerts
from alertstation.alerts.trust import TrustUnavailable, trust_for
from alertstation.app import create_app
from alertstation.cli import main
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.migrate import alembic_config
from alertstation.settings import VARIABLES, Settings, SettingsError, validate_variable
from tests.alerts.feed_server import Canned, running_server
from tests.fixtures.alerts.signing import FIXTURES, Pki, issue, make_ca, sign_alert
from tests.support import Clock, StationHarness, clear_tables

VARIABLE = "ALERTSTATION_IPAWS_TRUST_ANCHORS"
START = Clock().now
CON = (FIXTURES / "cap12_svr_con.xml").read_bytes()
NEW = (FIXTURES / "cap12_svr_new.xml").read_bytes()
CAN = (FIXTURES / "cap12_svr_can.xml").read_bytes()
CON_ID = "urn:oid:2.49.0.1.840.0.9d3e71b05a2c48f6e1d07c3b58a2e94f6c01d7b3.001.1"
NEW_ID = "urn:oid:2.49.0.1.840.0.4c1a5f0e2b7d9a3c61e8f04b2d97a5c3e10b6f28.001.1"
CAN_ID = "urn:oid:2.49.0.1.840.0.1f8a6c2d94e07b3a5c1d8e2f60b7a9c4d3e5f102.001.1"
NO_ANCHOR = "the message is signed, but no trust anchor is configured to check it"


def make_station_pki() -> Pki:
    """A CA and a signer valid from a month before the test clock to ten years after it."""
    ca_key, ca = make_ca()
    signer = issue(
        ca_key, ca, not_before=START - timedelta(days=30), not_after=START + timedelta(days=3650)
    )
    return Pki(ca_key, ca, signer)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return make_station_pki()


@pytest.fixture(scope="module")
def stranger() -> Pki:
    return make_station_pki()


@pytest.fixture
def bundle(tmp_path: Path, pki: Pki) -> Path:
    path = tmp_path / "ipaws-anchors.pem"
    path.write_bytes(pki.anchor_pem())
    return path


def settings_from_env(tmp_path: Path, engine: Engine, **extra: str) -> Settings:
    env = {
        "ALERTSTATION_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": engine.url.render_as_string(hide_password=False),
        **extra,
    }
    return Settings.from_env(env)


@pytest.fixture
def db(engine: Engine) -> Iterator[Engine]:
    """The test database with Kay County, OK (the samples' 040109) as the broadcast area."""
    with begin_write(engine) as conn:
        set_alert_settings(conn, zone_codes=["040109"])
    yield engine
    clear_tables(engine)


def stored(engine: Engine) -> dict[str, tuple[str, str]]:
    """Return {identifier: (signature_status, signature_reason)} of every stored alert."""
    a = cap_alerts.c
    with engine.connect() as conn:
        rows = conn.execute(select(a.identifier, a.signature_status, a.signature_reason)).all()
    return {row.identifier: (row.signature_status, row.signature_reason) for row in rows}


def bump_mtime(path: Path) -> None:
    """Move the file's modification time on, as an edit a second later would."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))


# --- import_messages with anchors from Settings -----------------------------------------------


def test_signed_message_with_configured_anchor_is_stored_verified(
    db: Engine, tmp_path: Path, pki: Pki, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    assert settings.ipaws_trust_anchors == bundle.resolve()
    signed = sign_alert(CON, pki.signer)
    [result] = import_messages(db, signed, "test", now=START, trust=trust_for(settings))
    assert not isinstance(result, ImportProblem) and result.outcome == "stored"
    status, reason = stored(db)[CON_ID]
    assert status == "verified"
    assert reason == "digest, signature value and certificate chain check out"


def test_signature_from_another_ca_is_stored_failed_with_the_reason(
    db: Engine, tmp_path: Path, stranger: Pki, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    signed = sign_alert(CON, stranger.signer)
    import_messages(db, signed, "test", now=START, trust=trust_for(settings))
    status, reason = stored(db)[CON_ID]
    assert status == "failed"
    assert reason.startswith("signing certificate not trusted")


def test_changed_signed_message_is_stored_failed_digest(
    db: Engine, tmp_path: Path, pki: Pki, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    signed = sign_alert(CON, pki.signer).replace(b"<value>040109</value>", b"<value>040071</value>")
    import_messages(db, signed, "test", now=START, trust=trust_for(settings))
    status, reason = stored(db)[CON_ID]
    assert status == "failed" and reason.startswith("digest mismatch")


def test_certificate_is_checked_at_the_time_of_receipt(
    db: Engine, tmp_path: Path, pki: Pki, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    signed = sign_alert(CON, pki.signer)
    before_validity = START - timedelta(days=31)
    import_messages(db, signed, "test", now=before_validity, trust=trust_for(settings))
    status, reason = stored(db)[CON_ID]
    assert status == "failed" and "not yet valid" in reason


def test_unsigned_message_is_stored_unsigned(db: Engine, tmp_path: Path, bundle: Path) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    import_messages(db, CON, "test", now=START, trust=trust_for(settings))
    assert stored(db)[CON_ID] == ("unsigned", "the message carries no XML signature")


def test_without_anchors_a_signed_message_is_never_verified(
    db: Engine, tmp_path: Path, pki: Pki
) -> None:
    settings = settings_from_env(tmp_path, db)
    assert settings.ipaws_trust_anchors is None and trust_for(settings) is None
    import_messages(db, sign_alert(CON, pki.signer), "test", now=START, trust=None)
    import_messages(db, NEW, "test", now=START)  # unsigned stays unsigned
    assert stored(db) == {
        CON_ID: ("failed", NO_ANCHOR),
        NEW_ID: ("unsigned", "the message carries no XML signature"),
    }


def test_a_duplicate_keeps_the_first_outcome(
    db: Engine, tmp_path: Path, pki: Pki, stranger: Pki, bundle: Path
) -> None:
    trust = trust_for(settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)}))
    import_messages(db, sign_alert(CON, stranger.signer), "first", now=START, trust=trust)
    [again] = import_messages(db, sign_alert(CON, pki.signer), "again", now=START, trust=trust)
    assert not isinstance(again, ImportProblem) and again.outcome == "duplicate"
    assert stored(db)[CON_ID][0] == "failed"


def test_unreadable_bundle_fails_signed_messages_naming_it_and_recovers(
    db: Engine,
    tmp_path: Path,
    pki: Pki,
    stranger: Pki,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "broken.pem"
    path.write_bytes(b"this is not a certificate\n")
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(path)})
    with caplog.at_level(logging.ERROR, logger="alertstation.alerts.trust"):
        trust = trust_for(settings)
        assert trust_for(settings) is trust  # read once while the file stays the same
    assert isinstance(trust, TrustUnavailable)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(path.resolve()) in errors[0].getMessage()

    import_messages(db, sign_alert(CON, pki.signer), "test", now=START, trust=trust)
    import_messages(db, NEW, "test", now=START, trust=trust)
    status, reason = stored(db)[CON_ID]
    assert status == "failed"
    assert str(path.resolve()) in reason and "could not be read" in reason
    assert stored(db)[NEW_ID][0] == "unsigned"

    # Fixing the file takes effect at the next look, without a restart.
    path.write_bytes(pki.anchor_pem())
    bump_mtime(path)
    import_messages(db, sign_alert(NEW, pki.signer), "test", now=START, trust=trust_for(settings))
    import_messages(db, sign_alert(CAN, pki.signer), "x", now=START, trust=trust_for(settings))
    assert stored(db)[CAN_ID][0] == "verified"

    # Replacing the anchor with another CA's: this CA's signatures no longer verify.
    path.write_bytes(stranger.anchor_pem())
    bump_mtime(path)
    clear_tables(db)
    import_messages(db, sign_alert(CON, pki.signer), "test", now=START, trust=trust_for(settings))
    status, reason = stored(db)[CON_ID]
    assert status == "failed" and reason.startswith("signing certificate not trusted")


def test_missing_bundle_file_is_unavailable(db: Engine, tmp_path: Path, pki: Pki) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(tmp_path / "gone.pem")})
    trust = trust_for(settings)
    assert isinstance(trust, TrustUnavailable) and "cannot read" in trust.problem
    import_messages(db, sign_alert(CON, pki.signer), "test", now=START, trust=trust)
    assert stored(db)[CON_ID][0] == "failed"


# --- the poller ------------------------------------------------------------------------------


def ipaws_feed(*documents: bytes) -> bytes:
    """Wrap signed alert documents in an IPAWS-style ``<alerts>`` feed."""
    bodies = [d.split(b"?>", 1)[1] if d.startswith(b"<?xml") else d for d in documents]
    return (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<ns1:alerts xmlns:ns1="http://gov.fema.ipaws.services/feed">'
        + b"".join(bodies)
        + b"</ns1:alerts>"
    )


def test_poller_stores_a_signed_ipaws_feed_verified(
    db: Engine, tmp_path: Path, pki: Pki, stranger: Pki, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)})
    feed = ipaws_feed(sign_alert(CON, pki.signer), sign_alert(NEW, stranger.signer), CAN)
    clock = Clock()
    with running_server() as server:
        server.serve("/ipaws", Canned(feed, content_type="application/xml"))
        with begin_write(db) as conn:
            config = read_config({"name": "IPAWS", "kind": "ipaws", "url": server.url("/ipaws")})
            create_source(conn, config, clock())
        poller = Poller(db, clock=clock, rng=lambda: 0.5, parallel=1, trust=trust_for(settings))
        [outcome] = poller.poll_due()
    assert outcome.ok and outcome.stored == 3
    found = stored(db)
    assert found[CON_ID][0] == "verified"
    assert found[NEW_ID][0] == "failed"
    assert found[NEW_ID][1].startswith("signing certificate not trusted")
    assert found[CAN_ID][0] == "unsigned"


def station_with(settings: Settings, engine: Engine) -> StationHarness:
    clock = Clock()
    app = create_app(settings, engine=engine, clock=clock)
    return StationHarness(app, falcon.testing.TestClient(app), clock, engine)


def test_worker_poll_job_uses_the_station_anchors(
    db: Engine, tmp_path: Path, pki: Pki, bundle: Path
) -> None:
    station = station_with(settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)}), db)
    with running_server() as server:
        server.serve("/con.xml", Canned(sign_alert(CON, pki.signer), content_type="text/xml"))
        with begin_write(db) as conn:
            config = read_config({"name": "cap", "kind": "cap-xml", "url": server.url("/con.xml")})
            create_source(conn, config, station.clock())
        poll_job(station.app.station)
        wait_for_poll_job(10)
    assert stored(db)[CON_ID][0] == "verified"


def test_trigger_poll_route_uses_the_station_anchors(
    db: Engine, tmp_path: Path, pki: Pki, bundle: Path
) -> None:
    station = station_with(settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)}), db)
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    with running_server() as server:
        server.serve("/con.xml", Canned(sign_alert(CON, pki.signer), content_type="text/xml"))
        with begin_write(db) as conn:
            config = read_config({"name": "cap", "kind": "cap-xml", "url": server.url("/con.xml")})
            create_source(conn, config, station.clock())
        answer = admin.request("POST", "/admin/trigger_poll")
    assert answer.status_code == 200 and answer.json["stored"] == 1
    assert stored(db)[CON_ID][0] == "verified"


# --- the import route, the API and the detail page -------------------------------------------


def test_import_route_api_and_detail_page_show_the_outcome(
    db: Engine, tmp_path: Path, pki: Pki, stranger: Pki, bundle: Path
) -> None:
    station = station_with(settings_from_env(tmp_path, db, **{VARIABLE: str(bundle)}), db)
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    for document in (sign_alert(CON, pki.signer), sign_alert(NEW, stranger.signer), CAN):
        answer = admin.request(
            "POST", "/admin/import_alert", body=document, headers={"Content-Type": "text/xml"}
        )
        assert answer.status_code == 200 and answer.json["stored"] == 1, answer.text

    listing = station.client.simulate_get("/api/alerts", params={"status": "all"})
    assert listing.status_code == 200
    items = {item["identifier"]: item for item in listing.json["alerts"]}
    assert items[CON_ID]["signature_status"] == "verified"
    assert items[CON_ID]["signature_reason"].startswith("digest, signature value")
    assert items[NEW_ID]["signature_status"] == "failed"
    assert items[NEW_ID]["signature_reason"].startswith("signing certificate not trusted")
    assert items[CAN_ID]["signature_status"] == "unsigned"

    expected = {CON_ID: "Verified", NEW_ID: "Signature failed", CAN_ID: "Unsigned"}
    css = {CON_ID: "signature-verified", NEW_ID: "signature-failed", CAN_ID: "signature-unsigned"}
    for identifier, text in expected.items():
        page = admin.request("GET", f"/alerts/{items[identifier]['id']}")
        assert page.status_code == 200
        badge = f'<span class="badge {css[identifier]}">{text}</span>'
        assert badge in page.text
        reason = items[identifier]["signature_reason"]
        escaped = reason.replace("&", "&amp;").replace("'", "&#39;").replace('"', "&#34;")
        assert f'<span id="alert-signature-reason">{escaped}</span>' in page.text


# --- the command line ------------------------------------------------------------------------


@pytest.fixture
def cli_env(db: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    monkeypatch.setenv("DATABASE_URL", db.url.render_as_string(hide_password=False))
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    monkeypatch.setenv("ALERTSTATION_LOG_FORMAT", "text")
    return db


def test_alerts_import_command_checks_against_the_configured_anchors(
    cli_env: Engine,
    tmp_path: Path,
    pki: Pki,
    bundle: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    signed = tmp_path / "signed.xml"
    signed.write_bytes(sign_alert(CON, pki.signer))
    unconfigured = tmp_path / "unconfigured.xml"
    unconfigured.write_bytes(sign_alert(NEW, pki.signer))
    assert main(["alerts", "import", str(unconfigured)]) == 0
    monkeypatch.setenv(VARIABLE, str(bundle))
    assert main(["alerts", "import", str(signed)]) == 0
    capsys.readouterr()
    found = stored(cli_env)
    # Checked at the wall clock here: the signer is valid for years around the test clock.
    assert found[CON_ID][0] == "verified"
    assert found[NEW_ID] == ("failed", NO_ANCHOR)


def test_poll_once_command_checks_against_the_configured_anchors(
    cli_env: Engine,
    pki: Pki,
    bundle: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(VARIABLE, str(bundle))
    with running_server() as server:
        server.serve("/con.xml", Canned(sign_alert(CON, pki.signer), content_type="text/xml"))
        with begin_write(cli_env) as conn:
            config = read_config({"name": "cap", "kind": "cap-xml", "url": server.url("/con.xml")})
            create_source(conn, config, Clock()())
        assert main(["poll", "--once"]) == 0
    assert "stored=1" in capsys.readouterr().out
    assert stored(cli_env)[CON_ID][0] == "verified"


# --- the setting -----------------------------------------------------------------------------


def test_the_variable_is_editable_and_validated(tmp_path: Path, bundle: Path) -> None:
    assert VARIABLE in {variable.name for variable in VARIABLES}
    assert validate_variable(VARIABLE, f"  {bundle}  ") == str(bundle)
    (tmp_path / "junk.pem").write_text(
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    )
    (tmp_path / "empty.pem").write_bytes(b"")
    bad: dict[str, Any] = {
        str(tmp_path / "missing.pem"): "is not a file",
        str(tmp_path): "is not a file",
        str(tmp_path / "junk.pem"): "no readable PEM certificate",
        str(tmp_path / "empty.pem"): "no readable PEM certificate",
    }
    for value, message in bad.items():
        with pytest.raises(SettingsError, match=message) as caught:
            validate_variable(VARIABLE, value)
        assert str(caught.value).startswith(VARIABLE)


def test_environment_page_refuses_a_bad_bundle_and_saves_a_good_one(
    db: Engine, tmp_path: Path, bundle: Path
) -> None:
    settings = settings_from_env(tmp_path, db)
    station = station_with(settings, db)
    station.add_user("boss", "admin")
    admin = station.sign_in("boss")
    refused = admin.request(
        "PUT",
        "/api/environment/variables",
        json={"variables": {VARIABLE: str(tmp_path / "missing.pem")}},
    )
    assert refused.status_code == 422 and VARIABLE in refused.text
    saved = admin.request(
        "PUT", "/api/environment/variables", json={"variables": {VARIABLE: str(bundle)}}
    )
    assert saved.status_code == 200, saved.text
    env = {"ALERTSTATION_DATA_DIR": str(settings.data_dir), "DATABASE_URL": settings.database_url}
    assert Settings.from_env(env).ipaws_trust_anchors == bundle.resolve()


# --- the migration ---------------------------------------------------------------------------


def test_migration_backfills_existing_alerts_without_claiming_verified(
    empty_database: str, pki: Pki
) -> None:
    engine = make_engine(empty_database)
    try:
        config = alembic_config(engine)
        command.upgrade(config, "20261124_hostban_privileges")
        columns = {c["name"] for c in sa.inspect(engine).get_columns("cap_alerts")}
        assert "signature_status" not in columns
        legacy = sa.table("cap_alerts", *(sa.column(name) for name in sorted(columns - {"id"})))
        geocodes = sa.table("cap_alert_geocodes", sa.column("alert_id"), sa.column("code_id"))
        row = {name: "x" for name in columns - {"id"}}
        row.update(
            sent=START,
            received_at=START,
            updated_at=START,
            effective=None,
            onset=None,
            expires=None,
            ends=None,
            cancelled_at=None,
            in_area=True,
            stored_area=True,
            explicit=False,
        )
        with engine.begin() as conn:
            conn.execute(
                legacy.insert(),
                [
                    {**row, "identifier": "plain", "raw": CON.decode()},
                    {**row, "identifier": "signed", "raw": sign_alert(CON, pki.signer).decode()},
                ],
            )
            ids = dict(conn.execute(sa.text("SELECT identifier, id FROM cap_alerts")).all())
            conn.execute(geocodes.insert(), [{"alert_id": i, "code_id": 7} for i in ids.values()])

        command.upgrade(config, "20261124_alert_signature")
        a = sa.table(
            "cap_alerts",
            sa.column("identifier"),
            sa.column("signature_status"),
            sa.column("signature_reason"),
        )
        with engine.connect() as conn:
            found = {r[0]: (r[1], r[2]) for r in conn.execute(sa.select(a.c[:3])).all()}
        assert found["plain"][0] == "unsigned"
        assert "no XML signature" in found["plain"][1]
        assert found["signed"][0] == "failed"
        assert "never checked" in found["signed"][1]

        with engine.begin() as conn:  # a row written without the columns reads unsigned
            conn.execute(legacy.insert().values({**row, "identifier": "later", "raw": "{}"}))
            later = conn.execute(
                sa.select(a.c.signature_status, a.c.signature_reason).where(
                    a.c.identifier == "later"
                )
            ).one()
        assert tuple(later) == ("unsigned", "no signature check recorded")

        command.downgrade(config, "20261124_hostban_privileges")
        columns = {c["name"] for c in sa.inspect(engine).get_columns("cap_alerts")}
        assert "signature_status" not in columns and "signature_reason" not in columns
        with engine.connect() as conn:  # the alerts' other rows survive the downgrade
            assert conn.execute(sa.select(sa.func.count()).select_from(geocodes)).scalar() == 2
    finally:
        engine.dispose()
