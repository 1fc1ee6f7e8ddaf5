"""The ``alertstation eas`` sub-commands."""

from __future__ import annotations

import argparse


def add_eas_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``eas encode`` and ``eas decode`` on the top-level sub-parsers."""
