"""axe-core, the accessibility checker, injected into pages by the Chromium tests.

axe-core is the npm package at the version ``tests/browser/package.json`` pins, installed by
``scripts/install-test-deps.sh`` (``make test-deps``) into ``tests/browser/node_modules``. It is
evaluated in the page through the DevTools protocol, which the page's Content-Security-Policy
does not govern, so the page under test keeps its real policy.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

HERE = Path(__file__).resolve().parent
AXE_SCRIPT = HERE / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts a page must never have (the issue's bar: 0 serious or critical violations).
BLOCKING_IMPACTS = frozenset({"serious", "critical"})


def pinned_version() -> str:
    """Return the axe-core version ``package.json`` pins."""
    return json.loads((HERE / "package.json").read_text())["devDependencies"]["axe-core"]


@cache
def axe_source() -> str:
    """Return axe-core's script; fail (with how to install it) when it is missing or unpinned."""
    installed = AXE_SCRIPT.parent / "package.json"
    if not AXE_SCRIPT.is_file() or not installed.is_file():
        pytest.fail(f"{AXE_SCRIPT} is missing: run scripts/install-test-deps.sh (make test-deps)")
    version = json.loads(installed.read_text())["version"]
    if version != pinned_version():
        pytest.fail(
            f"axe-core {version} is installed but {pinned_version()} is pinned: "
            "run scripts/install-test-deps.sh (make test-deps)"
        )
    return AXE_SCRIPT.read_text(encoding="utf-8")


def axe_run(
    page: Page, options: dict[str, Any] | None = None, within: str | None = None
) -> list[dict[str, Any]]:
    """Inject axe-core (once per document) and return its violations of the page as it is now.

    ``within`` (a CSS selector) checks only that part of the page. Each violation is axe's own
    dict: ``id``, ``impact``, ``help`` and ``nodes`` (with each node's ``target`` selector and
    ``failureSummary``).
    """
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    run_options = {"resultTypes": ["violations"], **(options or {})}
    results = page.evaluate(
        "([within, options]) => axe.run(within ? document.querySelector(within) : document,"
        " options)",
        [within, run_options],
    )
    return results["violations"]


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Return every axe-core violation of the page, each as its rule id and node targets."""
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]]} for v in axe_run(page)]


def serious_violations(
    page: Page, options: dict[str, Any] | None = None, within: str | None = None
) -> list[str]:
    """Return the serious and critical violations as readable lines (empty when none)."""
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:5])
        for v in axe_run(page, options, within)
        if v.get("impact") in BLOCKING_IMPACTS
    ]
