"""Benchmark-run checks: under ``make bench`` a skipped benchmark fails the run.

``make bench`` sets ``ALERTSTATION_BENCH_NO_SKIPS=1`` after installing every peer and starting a
throwaway PostgreSQL, so a skip (a missing peer, no cluster, no shared data) means a group would
silently be missing from the report. ``make test`` collects the same files without it.
"""

from __future__ import annotations

import os

import pytest

NO_SKIPS = "ALERTSTATION_BENCH_NO_SKIPS"
_skipped: list[str] = []


def _strict() -> bool:
    return os.environ.get(NO_SKIPS, "") not in ("", "0")


def _note(report: pytest.CollectReport | pytest.TestReport) -> None:
    reason = report.longrepr
    if isinstance(reason, tuple):  # (path, line, "Skipped: why")
        reason = reason[2]
    _skipped.append(f"{report.nodeid}: {reason}")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _note(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _note(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _strict() and _skipped and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _strict() and _skipped:
        terminalreporter.write_line(
            f"{NO_SKIPS}: every benchmark must run, but {len(_skipped)} skipped:", red=True
        )
        for line in _skipped:
            terminalreporter.write_line(f"  {line}", red=True)
