"""The ``alertstation zones`` sub-commands."""

from __future__ import annotations

import argparse


def add_zones_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``zones sync`` and ``zones download`` on the top-level sub-parsers."""
