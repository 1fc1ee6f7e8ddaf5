"""Airing settings: permissions, validation, the Icecast password kept secret, audit rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.eas.airing import settings as settings_airing
from tests.support import SignedIn, StationHarness

PATH = "/admin/eas_settings"
REGENERATE = PATH + "/icecast/regenerate-password"
SECRET = "Sup3r-Secret-Source-PW"


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def config_rows(station: StationHarness) -> list[Any]:
    with station.engine.connect() as conn:
        query = (
            select(audit_logs)
            .where(audit_logs.c.action == "config.updated")
            .order_by(audit_logs.c.id)
        )
        return list(conn.execute(query))


def stored(station: StationHarness) -> settings_airing.AiringSettings:
    with station.engine.connect() as conn:
        return settings_airing.load(conn)


def test_defaults(operator: SignedIn) -> None:
    result = operator.request("GET", PATH, csrf=False)
    assert result.status_code == 200
    settings = result.json["settings"]
    assert settings["icecast_enabled"] is False and settings["alsa_enabled"] is False
    assert settings["sample_rate"] == 22050 and settings["icecast_password_set"] is False
    assert 44100 in result.json["sample_rates"]


@pytest.mark.parametrize("role", ["viewer", "demo"])
def test_only_system_configure_may_read_or_change(station: StationHarness, role: str) -> None:
    station.add_user("someone", role)
    client = station.sign_in("someone")
    assert client.request("GET", PATH, csrf=False).status_code == 403
    assert client.request("PUT", PATH, json={"alsa_enabled": True}).status_code == 403
    assert client.request("POST", REGENERATE).status_code == 403
    assert client.request("GET", "/eas/queue", csrf=False).status_code == 403
    assert config_rows(station) == []


def test_save_redacts_the_password_everywhere(station: StationHarness, operator: SignedIn) -> None:
    body = {
        "icecast_enabled": True,
        "icecast_host": "icecast.example.net",
        "icecast_port": 8443,
        "icecast_mount": "/eas.mp3",
        "icecast_password": SECRET,
        "icecast_tls": True,
    }
    result = operator.request("PUT", PATH, json=body)
    assert result.status_code == 200, result.text
    assert SECRET not in result.text
    assert result.json["settings"]["icecast_password_set"] is True
    assert result.json["changed"] == [
        "icecast_enabled",
        "icecast_host",
        "icecast_password",
        "icecast_port",
        "icecast_tls",
    ]
    assert stored(station).icecast_password == SECRET
    assert SECRET not in operator.request("GET", PATH, csrf=False).text

    (row,) = config_rows(station)
    assert row.target == "eas_settings" and row.username == "ops"
    assert SECRET not in row.details
    assert json.loads(row.details)["fields"] == result.json["changed"]


def test_a_blank_password_keeps_the_stored_one(station: StationHarness, operator: SignedIn) -> None:
    operator.request("PUT", PATH, json={"icecast_password": SECRET})
    result = operator.request(
        "PUT", PATH, json={"icecast_password": "", "icecast_enabled": True, "icecast_port": 8001}
    )
    assert result.status_code == 200, result.text
    assert result.json["changed"] == ["icecast_enabled", "icecast_port"]
    assert stored(station).icecast_password == SECRET
    assert json.loads(config_rows(station)[-1].details)["fields"] == [
        "icecast_enabled",
        "icecast_port",
    ]


def test_icecast_needs_a_password(station: StationHarness, operator: SignedIn) -> None:
    result = operator.request("PUT", PATH, json={"icecast_enabled": True})
    assert result.status_code == 422
    assert result.json["error"]["details"]["field"] == "icecast_password"
    assert stored(station).icecast_enabled is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sample_rate": 12345}, "sample_rate"),
        ({"sample_rate": "fast"}, "sample_rate"),
        ({"icecast_port": 0}, "icecast_port"),
        ({"icecast_port": 70000}, "icecast_port"),
        ({"icecast_host": "bad host"}, "icecast_host"),
        ({"icecast_mount": "eas.mp3"}, "icecast_mount"),
        ({"icecast_mount": "/../admin"}, "icecast_mount"),
        ({"icecast_username": "a:b"}, "icecast_username"),
        ({"icecast_password": "has space"}, "icecast_password"),
        ({"icecast_tls": "yes"}, "icecast_tls"),
        ({"alsa_device": "-D"}, "alsa_device"),
        ({"alsa_device": "hw:0; rm"}, "alsa_device"),
        ({"volume": 11}, "volume"),
    ],
)
def test_bad_values_are_422_naming_the_field(
    station: StationHarness, operator: SignedIn, body: dict[str, Any], field: str
) -> None:
    result = operator.request("PUT", PATH, json={"alsa_enabled": True, **body})
    assert result.status_code == 422, result.text
    assert result.json["error"]["details"]["field"] == field
    assert stored(station).alsa_enabled is False  # nothing of a refused save is kept
    assert config_rows(station) == []


def test_regenerate_returns_the_password_once_and_audits_an_action(
    station: StationHarness, operator: SignedIn
) -> None:
    result = operator.request("POST", REGENERATE)
    assert result.status_code == 200, result.text
    password = result.json["password"]
    assert len(password) >= 20 and result.headers["cache-control"] == "no-store"
    assert stored(station).icecast_password == password
    assert result.json["settings"]["icecast_password_set"] is True
    assert password not in operator.request("GET", PATH, csrf=False).text

    again = operator.request("POST", REGENERATE).json["password"]
    assert again != password and stored(station).icecast_password == again

    rows = config_rows(station)
    assert len(rows) == 2
    for row in rows:
        assert row.target == "eas_settings" and row.username == "ops"
        assert json.loads(row.details) == {"action": "icecast_password_regenerated"}
        assert password not in row.details and again not in row.details


def test_the_page(station: StationHarness, operator: SignedIn) -> None:
    operator.request("PUT", PATH, json={"icecast_password": SECRET, "alsa_device": "hw:1,0"})
    page = operator.request("GET", PATH, csrf=False, headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert 'id="eas-settings-form"' in html and 'value="hw:1,0"' in html
    assert SECRET not in html
    assert "eas-settings.js" in html and "<script>" not in html
    manual = operator.request("GET", "/eas/manual", csrf=False, headers={"Accept": "text/html"})
    assert 'href="/admin/eas_settings"' in manual.text and 'id="eas-queue"' not in manual.text
