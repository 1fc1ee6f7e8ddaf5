"""Drive the transmitter-keying relays through GPIO: keyed while a message airs, and the
settings page's test pulse.

The station talks to the kernel's sysfs GPIO interface (``/sys/class/gpio``): export the pin,
make it an output, write its value. :func:`open_gpio` returns that driver; tests replace it
with a stand-in that records what was written, since no runner has relays. The airing loop
holds the saved relay pins closed with :func:`keyed` while a message plays; the test button
(``alertstation.operations``) pulses one with :func:`pulse_relay`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Protocol

log = logging.getLogger("alertstation.eas")

SYSFS_GPIO: Final[Path] = Path("/sys/class/gpio")
#: The longest pulse the test button may ask for: keying a transmitter longer is not a test.
MAX_PULSE_SECONDS: Final[float] = 5.0


class GpioUnavailable(RuntimeError):
    """This machine has no usable GPIO interface, or writing a pin failed."""


class Gpio(Protocol):
    """What the relay code needs from a GPIO driver."""

    def write(self, pin: int, high: bool) -> None:
        """Drive output ``pin`` high or low."""


class SysfsGpio:
    """GPIO through ``/sys/class/gpio`` (export, direction, value)."""

    def __init__(self, root: Path = SYSFS_GPIO) -> None:
        self._root = root

    def write(self, pin: int, high: bool) -> None:
        """Export ``pin`` if needed, make it an output and drive it."""
        pin_dir = self._root / f"gpio{int(pin)}"
        try:
            if not pin_dir.exists():
                (self._root / "export").write_text(str(int(pin)))
            (pin_dir / "direction").write_text("out")
            (pin_dir / "value").write_text("1" if high else "0")
        except OSError as ex:
            raise GpioUnavailable(f"GPIO {pin}: {ex.strerror or ex}") from ex


def open_gpio() -> Gpio:
    """Return this machine's GPIO driver; GpioUnavailable when it has none."""
    if not (SYSFS_GPIO / "export").exists():
        raise GpioUnavailable(f"no GPIO interface at {SYSFS_GPIO} on this machine")
    return SysfsGpio()


def pulse_relay(
    gpio: Gpio,
    pin: int,
    *,
    active_high: bool,
    seconds: float,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Close relay ``pin`` for ``seconds`` and open it again, even when the wait is cut short."""
    if not 0 < seconds <= MAX_PULSE_SECONDS:
        raise ValueError(f"seconds must be more than 0 and at most {MAX_PULSE_SECONDS}")
    gpio.write(pin, active_high)
    try:
        sleep(seconds)
    finally:
        gpio.write(pin, not active_high)


@contextmanager
def keyed(gpio: Gpio, pins: Sequence[int], *, active_high: bool) -> Iterator[None]:
    """Close every relay in ``pins`` for the ``with`` block, then open them all again.

    Every pin that was (or may have been) closed is opened again, also when closing a later pin
    or the block fails; a pin that cannot be opened does not stop the others. GpioUnavailable
    when closing or opening a pin failed (after every pin has been tried).
    """
    touched: list[int] = []
    failed: GpioUnavailable | None = None
    try:
        for pin in pins:
            touched.append(pin)
            gpio.write(pin, active_high)
        yield
    finally:
        for pin in touched:
            try:
                gpio.write(pin, not active_high)
            except Exception as ex:  # keep opening the others
                log.error("relay on GPIO %s could not be opened again: %s", pin, ex)
                failed = failed or GpioUnavailable(f"GPIO {pin} could not be opened again: {ex}")
    if failed is not None:
        raise failed
