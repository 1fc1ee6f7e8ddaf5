"""Print the HTTP benchmark's table (req/s, p99, ratios) in pytest's terminal summary."""

from __future__ import annotations

import pytest

from benchmarks.http import table


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in table.LINES:
        terminalreporter.write_line(line)
