"""Operations settings: each section saves, audits old and new values and never a secret."""

from __future__ import annotations

import io
import json
import logging
import wave
from typing import Any

import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.db.engine import begin_write
from alertstation.eas.airing import relays
from alertstation.errors import Invalid
from alertstation.operations.speech import ESPEAK
from alertstation.settings_admin import sections as store
from alertstation.traffic.settings import load_settings as load_traffic_settings
from alertstation.traffic.settings import save_settings as save_traffic_settings
from tests.support import StationHarness as Station

SECRETS = ("tok-SEKRIT-4711", "endec-PASS-0815")


def _config_rows(station: Station) -> list[Any]:
    with station.engine.connect() as conn:
        return list(
            conn.execute(
                select(audit_logs)
                .where(audit_logs.c.action == "config.updated")
                .order_by(audit_logs.c.id)
            )
        )


def _admin(station: Station) -> Any:
    station.add_user("ops", "admin")
    return station.sign_in("ops")


def test_decoder_feed_secrets_never_leave_the_server(
    station: Station, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ops = _admin(station)
    body = {
        "monitor_enabled": True,
        "monitor_url": "https://monitor.example/eas",
        "monitor_token": SECRETS[0],
        "endec_enabled": True,
        "endec_host": "10.0.0.5",
        "endec_port": 10001,
        "endec_password": SECRETS[1],
    }
    saved = ops.request("PUT", "/api/settings/decoder_feed", json=body)
    assert saved.status_code == 200, saved.text
    assert saved.json["changed"] == sorted(body)
    assert saved.json["settings"]["monitor_token_set"] is True
    assert saved.json["settings"]["endec_password_set"] is True
    listing = ops.request("GET", "/api/settings")
    page = ops.request("GET", "/admin/settings")
    assert page.status_code == 200 and "ENDEC" in page.text
    (row,) = _config_rows(station)
    assert row.target == "settings.decoder_feed" and row.username == "ops"
    details = json.loads(row.details)
    assert details["fields"] == sorted(body)
    # Values beside the names, never a secret's: the token and the password stay names only.
    assert not {"monitor_token", "endec_password"} & set(details.get("changes", {}))
    assert "PUT /api/settings/decoder_feed" in caplog.text  # the logs were captured
    for secret in SECRETS:
        for text in (saved.text, listing.text, page.text, row.details, caplog.text):
            assert secret not in text
    # The server side still has them, for the feed itself.
    with station.engine.connect() as conn:
        stored = store.decoder_feed_settings(conn)
    assert (stored["monitor_token"], stored["endec_password"]) == SECRETS

    # A blank secret keeps the stored one and is not a change.
    again = ops.request(
        "PUT", "/api/settings/decoder_feed", json={"endec_password": "", "endec_port": 10002}
    )
    assert again.json["changed"] == ["endec_port"]
    with station.engine.connect() as conn:
        assert store.decoder_feed_settings(conn)["endec_password"] == SECRETS[1]


@pytest.mark.parametrize(
    ("section", "body", "field"),
    [
        ("decoder_feed", {"monitor_url": "https://user:pw@monitor.example/"}, "monitor_url"),
        ("decoder_feed", {"monitor_url": "ftp://monitor.example/"}, "monitor_url"),
        ("decoder_feed", {"endec_enabled": True}, "endec_host"),
        ("hardware", {"relay_pins": [17, 17]}, "relay_pins"),
        ("hardware", {"relay_pins": [40]}, "relay_pins"),
        ("hardware", {"capture_devices": ["hw:1,0; rm -rf"]}, "capture_devices"),
        ("tts", {"rate": 1000}, "rate"),
        ("tts", {"voice": "--help"}, "voice"),
        ("application", {"traffic_retention_days": 0}, "traffic_retention_days"),
        ("application", {"password_min_length": 6}, "password_min_length"),
        ("application", {"colour": "red"}, "colour"),
    ],
)
def test_bad_values_change_nothing(
    station: Station, section: str, body: dict[str, Any], field: str
) -> None:
    ops = _admin(station)
    result = ops.request("PUT", f"/api/settings/{section}", json=body)
    assert result.status_code == 422, result.text
    assert result.json["error"]["details"]["field"] == field
    assert _config_rows(station) == []
    listing = ops.request("GET", "/api/settings").json["sections"]
    assert listing[section]["updated_at"] is None


def test_unknown_section_is_refused(station: Station) -> None:
    ops = _admin(station)
    assert ops.request("PUT", "/api/settings/nope", json={}).status_code == 422


def test_viewer_reads_but_cannot_save(station: Station) -> None:
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/api/settings").status_code == 200
    refused = viewer.request("PUT", "/api/settings/tts", json={"rate": 170})
    assert refused.status_code == 403
    assert viewer.request("GET", "/admin/env_config").status_code == 403
    assert _config_rows(station) == []


def test_password_policy_is_saved_audited_and_enforced(station: Station) -> None:
    ops = _admin(station)
    saved = ops.request(
        "PUT",
        "/api/settings/application",
        json={
            "password_min_length": 20,
            "password_refuse_username": True,
            "traffic_retention_days": 30,
        },
    )
    assert saved.status_code == 200, saved.text
    # refuse_username was already on by default, so it is not a change.
    assert saved.json["changed"] == ["password_min_length", "traffic_retention_days"]
    (row,) = _config_rows(station)
    assert row.target == "settings.application"
    details = json.loads(row.details)
    assert details["fields"] == ["password_min_length", "traffic_retention_days"]
    assert sorted(details["changes"]) == details["fields"]

    too_short = ops.request(
        "POST", "/admin/users", json={"username": "newbie", "role": "viewer", "password": "x" * 19}
    )
    assert too_short.status_code == 422 and "20 characters" in too_short.text
    named = ops.request(
        "POST",
        "/admin/users",
        json={"username": "newbie", "role": "viewer", "password": "my-NEWBIE-password-long"},
    )
    assert named.status_code == 422 and "user name" in named.text
    fine = ops.request(
        "POST",
        "/admin/users",
        json={"username": "newbie", "role": "viewer", "password": "a long enough passphrase"},
    )
    assert fine.status_code in (200, 201), fine.text

    with station.engine.connect() as conn:
        policy = store.retention_policy(conn)
        # One value: the traffic retention is the traffic package's own setting.
        assert load_traffic_settings(conn).retention_days == 30
    assert policy.audit_export_days == 365 and policy.audio_alert_retention_days == 30
    assert saved.json["settings"]["traffic_retention_days"] == 30


def test_retention_policy_defaults_before_any_save(station: Station) -> None:
    with station.engine.connect() as conn:
        policy = store.retention_policy(conn)
    assert (policy.audit_export_days, policy.audio_alert_retention_days) == (365, 30)


def test_traffic_retention_is_the_traffic_packages_own_setting(station: Station) -> None:
    ops = _admin(station)
    with begin_write(station.engine) as conn:
        save_traffic_settings(conn, {"retention_days": 45}, station.clock())
    shown = ops.request("GET", "/api/settings").json["sections"]["application"]
    assert shown["traffic_retention_days"] == 45  # saved by the traffic settings, shown here
    saved = ops.request("PUT", "/api/settings/application", json={"traffic_retention_days": 60})
    assert saved.status_code == 200 and saved.json["changed"] == ["traffic_retention_days"]
    with station.engine.connect() as conn:
        assert load_traffic_settings(conn).retention_days == 60
    bad = ops.request("PUT", "/api/settings/application", json={"traffic_retention_days": 0})
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == (
        "traffic_retention_days"
    )
    with station.engine.connect() as conn:
        assert load_traffic_settings(conn).retention_days == 60


class StandInGpio:
    """Records pin writes instead of driving hardware."""

    def __init__(self) -> None:
        self.writes: list[tuple[int, bool]] = []

    def write(self, pin: int, high: bool) -> None:
        self.writes.append((pin, high))


def test_hardware_saves_and_the_test_button_pulses_a_saved_relay(
    station: Station, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpio = StandInGpio()
    monkeypatch.setattr(relays, "open_gpio", lambda: gpio)
    ops = _admin(station)
    saved = ops.request(
        "PUT",
        "/api/settings/hardware",
        json={"relay_pins": [17, 27], "relay_active_high": False, "capture_devices": ["hw:1,0"]},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json["changed"] == ["capture_devices", "relay_active_high", "relay_pins"]
    (row,) = _config_rows(station)
    assert row.target == "settings.hardware"

    pulsed = ops.request(
        "POST", "/api/settings/hardware/test-relay", json={"pin": 27, "seconds": 0.01}
    )
    assert pulsed.status_code == 200, pulsed.text
    assert gpio.writes == [(27, False), (27, True)]  # active-low: close, then open again

    unknown = ops.request("POST", "/api/settings/hardware/test-relay", json={"pin": 22})
    assert unknown.status_code == 422 and gpio.writes == [(27, False), (27, True)]
    page = ops.request("GET", "/admin/settings").text
    assert "Test GPIO 17" in page and "Test GPIO 27" in page


def test_pulse_opens_the_relay_even_when_the_wait_fails() -> None:
    gpio = StandInGpio()

    def interrupted(_: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        relays.pulse_relay(gpio, 5, active_high=True, seconds=1, sleep=interrupted)
    assert gpio.writes == [(5, True), (5, False)]
    with pytest.raises(ValueError):
        relays.pulse_relay(gpio, 5, active_high=True, seconds=60)


def test_sysfs_driver_exports_and_drives_the_pin(tmp_path: Any) -> None:
    (tmp_path / "gpio4").mkdir()
    (tmp_path / "export").write_text("")
    relays.SysfsGpio(tmp_path).write(4, True)
    assert (tmp_path / "gpio4" / "direction").read_text() == "out"
    assert (tmp_path / "gpio4" / "value").read_text() == "1"
    with pytest.raises(relays.GpioUnavailable):
        relays.SysfsGpio(tmp_path).write(9, True)  # export did not create gpio9


def test_no_gpio_is_a_clear_503(station: Station, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relays, "SYSFS_GPIO", station.app.station.settings.data_dir / "no-gpio")
    ops = _admin(station)
    ops.request("PUT", "/api/settings/hardware", json={"relay_pins": [17]})
    result = ops.request("POST", "/api/settings/hardware/test-relay", json={"pin": 17})
    assert result.status_code == 503 and result.json["error"]["code"] == "gpio_unavailable"


def test_tts_saves_and_previews_a_wav(station: Station) -> None:
    import shutil

    assert shutil.which(ESPEAK), "espeak-ng is installed by scripts/install-test-deps.sh"
    ops = _admin(station)
    saved = ops.request("PUT", "/api/settings/tts", json={"voice": "en-us", "rate": 140})
    assert saved.status_code == 200 and saved.json["changed"] == ["rate"]
    (row,) = _config_rows(station)
    assert row.target == "settings.tts"
    preview = ops.request("POST", "/api/settings/tts/preview", json={"volume": 50})
    assert preview.status_code == 200, preview.text
    assert preview.headers["content-type"] == "audio/wav"
    with wave.open(io.BytesIO(preview.content)) as wav:
        assert wav.getnframes() / wav.getframerate() > 0.5  # it really spoke
    unknown = ops.request("POST", "/api/settings/tts/preview", json={"voice": "xx-nosuchvoice"})
    assert unknown.status_code == 503 and "xx-nosuchvoice" in unknown.text
    # The page's audio element plays it by GET, with the settings as query parameters.
    by_get = ops.request("GET", "/api/settings/tts/preview", params={"rate": "200", "volume": "80"})
    assert by_get.status_code == 200 and by_get.content[:4] == b"RIFF"
    bad = ops.request("GET", "/api/settings/tts/preview", params={"rate": "9"})
    assert bad.status_code == 422 and bad.json["error"]["details"]["field"] == "rate"
    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    assert viewer.request("GET", "/api/settings/tts/preview").status_code == 403


def test_env_config_redacts_secrets(station: Station, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://station:hunter2-secret@db.example/station")
    monkeypatch.setenv("ALERTSTATION_LOG_LEVEL", "DEBUG")
    ops = _admin(station)
    page = ops.request("GET", "/admin/env_config")
    assert page.status_code == 200
    assert "ALERTSTATION_LOG_LEVEL=DEBUG" in page.text
    assert "DATABASE_URL=&lt;redacted" in page.text
    assert "hunter2" not in page.text


def test_section_save_is_one_transaction(station: Station) -> None:
    """A failing check after a valid field leaves the stored row as it was."""
    with begin_write(station.engine) as conn:
        store.save(conn, store.TTS, {"rate": 200}, updated_by="t", now=station.clock())
    with pytest.raises(Invalid), begin_write(station.engine) as conn:
        store.save(
            conn, store.TTS, {"rate": 150, "volume": 999}, updated_by="t", now=station.clock()
        )
    with station.engine.connect() as conn:
        assert store.tts_settings(conn)["rate"] == 200
