"""The ``alertstation alerts`` sub-commands."""

from __future__ import annotations

import argparse


def add_alerts_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``alerts import`` and ``alerts list`` on the top-level sub-parsers."""
