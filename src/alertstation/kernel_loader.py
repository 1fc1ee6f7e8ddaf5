"""Load a compiled kernel from ``alertstation._native``, or say plainly why it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from alertstation.settings import native_required


def load_kernel(name: str) -> ModuleType | None:
    """Import ``alertstation._native.<name>``; None when it is not built.

    With ``ALERTSTATION_REQUIRE_NATIVE=1`` (set by ``make test``) a missing module is an
    ImportError instead, so a silent fallback to the slow reference code fails the run.
    """
    try:
        return importlib.import_module(f"alertstation._native.{name}")
    except ImportError as ex:
        if native_required():
            raise ImportError(
                f"ALERTSTATION_REQUIRE_NATIVE=1 but alertstation._native.{name} did not import; "
                "build the extension (pip install -e .) or unset the variable"
            ) from ex
        return None
