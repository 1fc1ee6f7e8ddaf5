"""The ``alertstation audit`` sub-commands."""

from __future__ import annotations

import argparse


def add_audit_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``audit verify`` and ``audit head`` on the top-level sub-parsers."""
