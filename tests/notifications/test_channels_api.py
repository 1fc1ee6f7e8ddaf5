"""The channels API and the page: permissions, CSRF, audit rows, and the URL never shown."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, select

from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.notifications import delivery, notify, service
from alertstation.notifications.tables import notification_channels, notification_deliveries
from alertstation.operations.backup.redaction import redacted_rows
from tests.support import StationHarness, clear_tables

NOW = datetime.now(UTC).replace(microsecond=0)

SECRET = "tok-5b1c9e0f-secret"
URL = f"ntfys://ops:{SECRET}@ntfy.example.org/station-alerts"


def test_channels_are_added_edited_tested_and_removed_without_showing_the_url(
    station: StationHarness,
) -> None:
    station.add_user("admin1", "admin")
    station.add_user("viewer1", "viewer")
    admin, viewer = station.sign_in("admin1"), station.sign_in("viewer1")
    api = "/api/notifications/channels"

    body = {"name": "Duty phone", "url": URL, "events": ["aired", "audio_alarm"]}
    assert admin.request("POST", api, json=body, csrf=False).status_code == 403  # CSRF
    assert viewer.request("POST", api, json=body).status_code == 403
    bad = admin.request("POST", api, json={**body, "events": ["nope"]})
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == "events"
    assert SECRET not in admin.request("POST", api, json={**body, "url": "no-scheme"}).text
    # Every bad field at once, each named, and the URL not echoed.
    several = admin.request("POST", api, json={"name": " ", "url": f"x{SECRET}", "events": 3})
    assert several.status_code == 422 and SECRET not in several.text
    errors = several.json["error"]["details"]["errors"]
    assert [error["field"] for error in errors] == ["name", "url", "events"]

    made = admin.request("POST", api, json=body)
    assert made.status_code == 201, made.text
    channel = made.json["channel"]
    assert channel["kind"] == "ntfys" and channel["url_set"] is True
    assert SECRET not in made.text and "ntfy.example.org" not in made.text
    assert admin.request("POST", api, json=body).status_code == 409  # the name is taken

    path = f"{api}/{channel['id']}"
    edited = admin.request("PUT", path, json={"url": "", "events": ["stopped"], "enabled": False})
    assert edited.status_code == 200, edited.text
    assert edited.json["changed"] == ["enabled", "events"]
    with station.engine.connect() as conn:
        assert conn.execute(select(notification_channels.c.url)).scalar_one() == URL

    tested = admin.request("POST", f"{path}/test")
    assert tested.status_code == 202
    with station.engine.connect() as conn:
        (delivery,) = conn.execute(select(notification_deliveries)).all()
    assert delivery.id == tested.json["delivery_id"] and delivery.state == "pending"

    listing = admin.request("GET", api)
    assert [c["name"] for c in listing.json["channels"]] == ["Duty phone"]
    page = admin.request("GET", "/notifications")
    assert page.status_code == 200 and "Duty phone" in page.text and SECRET not in page.text
    seen = viewer.request("GET", "/notifications")  # system.view_config: the page, no buttons
    assert seen.status_code == 200 and "Duty phone" in seen.text and "channel-test" not in seen.text
    assert viewer.request("GET", api).status_code == 403

    assert admin.request("DELETE", path).status_code == 200
    assert admin.request("DELETE", path).status_code == 404
    with station.engine.connect() as conn:
        rows = conn.execute(select(audit_logs).order_by(audit_logs.c.id)).all()
    actions = [r.action for r in rows if r.action.startswith("notifications.")]
    assert actions == [
        "notifications.channel.created",
        "notifications.channel.updated",
        "notifications.channel.tested",
        "notifications.channel.deleted",
    ]
    assert all(SECRET not in r.details and "ntfy.example.org" not in r.details for r in rows)
    updated = next(r for r in rows if r.action == "notifications.channel.updated")
    assert json.loads(updated.details)["fields"] == ["enabled", "events"]


def test_an_operators_backup_leaves_the_channel_urls_out(conn: Connection) -> None:
    body = {"name": "Duty phone", "url": URL, "events": ["aired"]}
    service.create_channel(conn, service.check_channel(body, creating=True), by="t", now=NOW)
    redacted = redacted_rows(conn)["notification_channels"]
    (row,) = redacted["rows"]
    assert row[redacted["columns"].index("url")] == ""
    assert SECRET not in json.dumps(redacted) and "Duty phone" in json.dumps(redacted)


def test_a_removed_channels_pending_delivery_fails_at_once(engine: Engine) -> None:
    try:
        with begin_write(engine) as conn:
            body = {"name": "gone", "url": URL, "events": ["aired"]}
            made = service.create_channel(
                conn, service.check_channel(body, creating=True), by="t", now=NOW
            )
            notify(conn, "aired", subject="s", body="b", now=NOW)
            service.delete_channel(conn, made["id"])
        assert delivery.send_due(engine, clock=lambda: NOW).failed == 1
        with engine.connect() as conn:
            (row,) = conn.execute(select(notification_deliveries)).all()
        assert (row.state, row.error, row.target) == ("failed", "the channel was removed", "gone")
    finally:
        clear_tables(engine)
