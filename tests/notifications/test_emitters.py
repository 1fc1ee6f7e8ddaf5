"""Who writes notifications today: approval queue, audio alarms, certificate expiry, the leader.

Each writes in its caller's transaction, and only for events a channel subscribes to."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import Connection, Engine, select

from alertstation.audio.alerts import open_alert
from alertstation.audio.sources import SourceConfig, create_source
from alertstation.eas.forward import pending
from alertstation.eas.forward.rules import HOLD, Decision, Mode
from alertstation.notifications import events, service
from alertstation.notifications.tables import notification_deliveries, notifications
from alertstation.operations.certificate import CERT_FILE, notify_expiry, tls_dir
from alertstation.worker.leader import announce_leadership
from tests.support import clear_tables

NOW = datetime.now(UTC).replace(microsecond=0)


def subscribe(conn: Connection, *subscribed: str) -> None:
    body = {"name": "all", "url": "json://127.0.0.1:9/", "events": list(subscribed)}
    service.create_channel(conn, service.check_channel(body, creating=True), by="t", now=NOW)


def written(conn: Connection) -> list[tuple[str, str]]:
    rows = conn.execute(select(notifications).order_by(notifications.c.id)).all()
    return [(row.event, row.subject) for row in rows]


def test_a_message_parked_for_approval_notifies(conn: Connection) -> None:
    subscribe(conn, events.PENDING_APPROVAL)
    pending.park(
        conn,
        origin="received",
        source="WX radio",
        header="ZCZC-WXR-TOR-039173+0030-3281720-KXYZ/NWS-",
        event_code="TOR",
        decision=Decision(Mode(HOLD, 5), "rule 1"),
        now=NOW,
        expires_at=NOW + timedelta(minutes=30),
    )
    ((event, subject),) = written(conn)
    assert event == "pending_approval" and subject.startswith("Awaiting approval: Tornado")
    body = conn.execute(select(notifications.c.body)).scalar_one()
    assert "rule 1" in body and "unless held or rejected" in body


def test_silence_and_a_source_down_notify_and_clipping_does_not(conn: Connection) -> None:
    subscribe(conn, events.AUDIO_ALARM)
    config = SourceConfig(name="Studio feed", kind="stream", url="http://127.0.0.1:9/")
    source = create_source(conn, config, NOW)
    open_alert(conn, source, "clipping", NOW)
    open_alert(conn, source, "silence", NOW, "no signal above -50 dBFS for 60 s")
    open_alert(conn, source, "silence", NOW)  # still going: no second alert, no notification
    open_alert(conn, source, "source_down", NOW)
    assert written(conn) == [
        ("audio_alarm", "Audio alarm: Studio feed is silent"),
        ("audio_alarm", "Audio alarm: Studio feed is down"),
    ]


def test_nothing_is_written_for_an_event_no_channel_subscribes_to(conn: Connection) -> None:
    subscribe(conn, events.AIRED)
    config = SourceConfig(name="Studio feed", kind="stream", url="http://127.0.0.1:9/")
    open_alert(conn, create_source(conn, config, NOW), "silence", NOW)
    assert written(conn) == []
    assert conn.execute(select(notification_deliveries)).all() == []


def _install_certificate(data_dir: Path, expires: datetime) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "station.example")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(expires - timedelta(days=90))
        .not_valid_after(expires)
        .sign(key, hashes.SHA256())
    )
    tls_dir(data_dir).mkdir(parents=True)
    (tls_dir(data_dir) / CERT_FILE).write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def test_the_certificate_notifies_14_and_3_days_ahead_once_each(
    conn: Connection, tmp_path: Path
) -> None:
    subscribe(conn, events.CERTIFICATE_EXPIRY)
    expires = NOW + timedelta(days=20)
    _install_certificate(tmp_path, expires)
    assert notify_expiry(conn, tmp_path, NOW) is None  # 20 days left
    assert notify_expiry(conn, tmp_path, expires - timedelta(days=13)) is not None
    assert notify_expiry(conn, tmp_path, expires - timedelta(days=12)) is None  # told already
    assert notify_expiry(conn, tmp_path, expires - timedelta(days=2)) is not None
    assert notify_expiry(conn, tmp_path, expires - timedelta(days=1)) is None
    subjects = [subject for _, subject in written(conn)]
    assert [s.split(" expires in ")[1].split(" ")[0] for s in subjects] == ["13", "2"]


def test_a_worker_becoming_leader_notifies(engine: Engine) -> None:
    try:
        with engine.begin() as conn:
            subscribe(conn, events.WORKER_CHANGE)
        announce_leadership(engine, NOW)
        with engine.connect() as conn:
            ((event, subject),) = written(conn)
            (delivery,) = conn.execute(select(notification_deliveries)).all()
        assert event == "worker_change" and subject.startswith("Worker leader: ")
        assert delivery.state == "pending" and delivery.target == "all"
        assert json.loads(
            engine.connect().execute(select(service.notification_channels.c.events)).scalar_one()
        ) == ["worker_change"]
    finally:
        clear_tables(engine)
