"""The airing loop keys the saved transmitter relays while a message airs, and always opens them.

No runner has relays: a stand-in GPIO driver records what would be written to the pins (the
same driver hook the settings page's test button uses). The relays key the transmitter only
when a real output airs the message: ALSA is enabled here with an ``aplay`` stand-in.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from alertstation.db.engine import begin_write
from alertstation.eas.airing import onair, relays
from alertstation.eas.airing import settings as settings_airing
from alertstation.eas.airing.tables import eas_airing_outputs, eas_airing_queue
from alertstation.settings_admin import sections
from tests.eas.airing_support import queue_message, timed_aplay
from tests.eas.test_airing import short_message
from tests.support import StationHarness


class StandInGpio:
    """Records pin writes; ``broken`` pins fail when closed."""

    def __init__(self, broken: tuple[int, ...] = ()) -> None:
        self.writes: list[tuple[int, bool]] = []
        self.broken = broken

    def write(self, pin: int, high: bool) -> None:
        self.writes.append((pin, high))
        if pin in self.broken and high is False:
            raise relays.GpioUnavailable(f"GPIO {pin}: write failed")


def save_relays(station: StationHarness, pins: list[int], active_high: bool) -> None:
    with begin_write(station.engine) as conn:
        sections.save(
            conn,
            sections.HARDWARE,
            {"relay_pins": pins, "relay_active_high": active_high},
            updated_by="test",
            now=station.clock(),
        )


def item(station: StationHarness) -> Any:
    with station.engine.connect() as conn:
        (row,) = conn.execute(select(eas_airing_queue)).all()
    return row


@pytest.fixture(autouse=True)
def alsa(station: StationHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "bin"
    timed_aplay(folder, scale=0.0)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    with begin_write(station.engine) as conn:
        settings_airing.save(conn, {"alsa_enabled": True}, updated_by="t", now=station.clock())


@pytest.fixture
def gpio(monkeypatch: pytest.MonkeyPatch) -> StandInGpio:
    driver = StandInGpio()
    monkeypatch.setattr(relays, "open_gpio", lambda: driver)
    return driver


def watch_play(monkeypatch: pytest.MonkeyPatch, gpio: StandInGpio, fail: bool = False) -> list:
    """Note the pin writes made before the outputs play (optionally failing the play)."""
    seen: list[list[tuple[int, bool]]] = []
    real = onair.play_all

    def play_all(outputs: Any, message: Any, **kwargs: Any) -> Any:
        seen.append(list(gpio.writes))
        if fail:
            raise RuntimeError("output thread died")
        return real(outputs, message, **kwargs)

    monkeypatch.setattr(onair, "play_all", play_all)
    return seen


def test_the_transmitter_is_keyed_while_the_message_airs(
    station: StationHarness, gpio: StandInGpio, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_relays(station, [17, 27], active_high=False)
    seen = watch_play(monkeypatch, gpio)
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert onair.run_once(station.app.station)
    assert seen == [[(17, False), (27, False)]]  # active-low: both closed before it plays
    assert gpio.writes == [(17, False), (27, False), (17, True), (27, True)]
    row = item(station)
    assert row.state == "aired", row.error


def test_without_saved_pins_no_relay_is_touched(station: StationHarness, gpio: StandInGpio) -> None:
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert onair.run_once(station.app.station)
    assert gpio.writes == [] and item(station).state == "aired"


def test_the_relays_open_when_the_airing_fails(
    station: StationHarness, gpio: StandInGpio, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_relays(station, [5], active_high=True)
    watch_play(monkeypatch, gpio, fail=True)
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert onair.run_once(station.app.station)
    assert gpio.writes == [(5, True), (5, False)]
    row = item(station)
    assert row.state == "failed" and "output thread died" in row.error


def test_no_gpio_airs_the_message_and_fails_the_item(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> relays.Gpio:
        raise relays.GpioUnavailable("no GPIO interface at /sys/class/gpio on this machine")

    monkeypatch.setattr(relays, "open_gpio", missing)
    save_relays(station, [17], active_high=True)
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert onair.run_once(station.app.station)
    row = item(station)
    # It still played on every output, so it aired; the relays' error is kept.
    assert row.state == "aired" and row.error.startswith("relays: GPIO [17]: no GPIO interface")
    with station.engine.connect() as conn:
        results = dict(
            conn.execute(
                select(eas_airing_outputs.c.name, eas_airing_outputs.c.ok).where(
                    eas_airing_outputs.c.queue_id == row.id
                )
            ).all()
        )
    assert results == {"archive": True, "alsa": True, "relays": False}


def test_a_pin_that_fails_to_close_releases_the_others(
    station: StationHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = StandInGpio(broken=(27,))
    monkeypatch.setattr(relays, "open_gpio", lambda: driver)
    save_relays(station, [17, 27, 22], active_high=False)
    queue_message(station.app.station, short_message(), aired_by="ops")
    assert onair.run_once(station.app.station)
    assert driver.writes == [(17, False), (27, False), (17, True), (27, True)]
    row = item(station)
    assert row.state == "aired" and "GPIO 27" in row.error


def test_an_archive_only_message_does_not_key_the_transmitter(
    station: StationHarness, gpio: StandInGpio
) -> None:
    save_relays(station, [17], active_high=True)
    queue_message(station.app.station, short_message(), aired_by="ops", archive_only=True)
    assert onair.run_once(station.app.station)
    assert gpio.writes == [] and item(station).state == "archived_only"


def test_keyed_opens_every_pin_even_when_one_cannot_be_opened() -> None:
    class StuckOpen(StandInGpio):
        def write(self, pin: int, high: bool) -> None:
            self.writes.append((pin, high))
            if pin == 4 and high is False:
                raise relays.GpioUnavailable("GPIO 4: stuck")

    driver = StuckOpen()
    with pytest.raises(relays.GpioUnavailable, match="GPIO 4"):
        with relays.keyed(driver, [4, 6], active_high=True):
            pass
    assert driver.writes == [(4, True), (6, True), (4, False), (6, False)]
