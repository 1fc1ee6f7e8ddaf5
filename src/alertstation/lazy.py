"""Heavy modules, imported where they are first used rather than at start-up.

This is the one place (command modules aside) that imports a module while the program runs.
Everything else names a heavy dependency at the top of its module through :func:`module`,
which returns a stand-in that imports the real module on first attribute access::

    from alertstation import lazy

    signal = lazy.module("scipy.signal")

    def smooth(samples):
        return signal.lfilter(...)  # scipy.signal is imported here, once

A command such as ``alertstation version`` then starts without loading scipy, fpdf, lxml,
shapely or apprise.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType
from typing import Any

_lock = threading.Lock()


def load(name: str) -> ModuleType:
    """Import ``name`` now (once; later calls return the same module)."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    with _lock:
        return importlib.import_module(name)


class LazyModule:
    """A stand-in for a module that is imported on first attribute access."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    @property
    def loaded(self) -> bool:
        """Whether the real module has been imported through this stand-in."""
        return self._module is not None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = load(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded"
        return f"<lazy module {self._name!r} ({state})>"


def module(name: str) -> LazyModule:
    """A stand-in for ``name`` that imports it on first use."""
    if not name or any(not part.isidentifier() for part in name.split(".")):
        raise ValueError(f"not a module name: {name!r}")
    return LazyModule(name)
