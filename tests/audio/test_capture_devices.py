"""A receiver may name (arecord -D) only an ALSA capture device listed in the hardware settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from alertstation.audio.sources import named_capture_device
from alertstation.db.engine import begin_write
from alertstation.settings_admin import sections
from tests.support import Clock, SignedIn, StationHarness, clear_tables, make_settings

ARECORD = "/usr/bin/arecord"
RECEIVERS = "/api/radio/receivers"


@pytest.fixture
def radio(tmp_path: Path, engine: Engine) -> Iterator[StationHarness]:
    """The real app whose admin allowlisted arecord for receivers."""
    clock = Clock()
    settings = make_settings(
        tmp_path,
        engine.url.render_as_string(hide_password=False),
        receiver_allowlist=(ARECORD,),
    )
    app = create_app(settings, engine=engine, clock=clock)
    try:
        yield StationHarness(app, falcon.testing.TestClient(app), clock, engine)
    finally:
        clear_tables(engine)


def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def configure(station: StationHarness, devices: list[str]) -> None:
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.HARDWARE,
            {"capture_devices": devices},
            updated_by="admin",
            now=station.clock(),
        )


def arecord(device: str) -> list[str]:
    return [ARECORD, "-D", device, "-f", "S16_LE", "-r", "24000", "-t", "raw"]


def test_a_receiver_names_only_a_configured_capture_device(radio: StationHarness) -> None:
    ops = operator(radio)
    refused = ops.request("POST", RECEIVERS, json={"name": "WX", "command": arecord("hw:2,0")})
    assert refused.status_code == 422 and refused.json["error"]["details"]["field"] == "command"
    assert "hw:2,0" in refused.json["error"]["message"]
    configure(radio, ["hw:1,0", "hw:2,0"])
    created = ops.request("POST", RECEIVERS, json={"name": "WX", "command": arecord("hw:2,0")})
    assert created.status_code == 201, created.text
    url = f"{RECEIVERS}/{created.json['id']}"
    moved = ops.request("PUT", url, json={"command": arecord("hw:3,0")})
    assert moved.status_code == 422 and "hw:3,0" in moved.json["error"]["message"]
    assert ops.request("GET", url).json["command"] == arecord("hw:2,0")
    assert ops.request("PUT", url, json={"command": arecord("hw:1,0")}).status_code == 200
    # A receiver that names no capture device is not affected.
    default = ops.request(
        "POST", RECEIVERS, json={"name": "Any", "command": [ARECORD, "-t", "raw"]}
    )
    assert default.status_code == 201, default.text


@pytest.mark.parametrize(
    ("command", "device"),
    [
        ([ARECORD, "-D", "hw:1,0"], "hw:1,0"),
        ([ARECORD, "-Dplughw:CARD=USB,DEV=0"], "plughw:CARD=USB,DEV=0"),
        ([ARECORD, "--device=hw:0,0", "-t", "raw"], "hw:0,0"),
        ([ARECORD, "--device", "default"], "default"),
        ([ARECORD, "-D"], ""),
        ([ARECORD, "-t", "raw"], None),
        (["/usr/bin/rtl_fm", "-D", "2", "-f", "162.55M"], None),  # rtl_fm's -D is not ALSA
    ],
)
def test_which_device_a_command_names(command: list[str], device: str | None) -> None:
    assert named_capture_device(command) == device
