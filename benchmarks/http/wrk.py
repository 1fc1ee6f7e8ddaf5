"""Drive wrk on loopback and read its report: requests per second, p99 latency, errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

THREADS = 2
CONNECTIONS = 16
WARMUP = "1s"
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}
_RATE = re.compile(r"^Requests/sec:\s+([\d.]+)", re.M)
_TOTAL = re.compile(r"^\s*(\d+) requests in ", re.M)
_P99 = re.compile(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", re.M)
_NON_2XX = re.compile(r"^\s*Non-2xx or 3xx responses:\s+(\d+)", re.M)
_SOCKET = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: requests per second, 99th percentile latency (seconds), what failed."""

    requests: int
    rate: float
    p99: float
    non_2xx: int
    socket_errors: int
    server_cpu: float = 0.0  # CPU seconds the server used during the run, when measured
    tries: int = 1  # runs it took to load every worker (see bench_http_end_to_end.load)

    @property
    def seconds_per_request(self) -> float:
        return 1.0 / self.rate

    @property
    def cpu_per_request(self) -> float:
        """Return the server's CPU seconds per request (0 when not measured)."""
        return self.server_cpu / self.requests if self.requests else 0.0


def available() -> bool:
    """Tell whether wrk is installed (scripts/install-bench-deps.sh installs it)."""
    return shutil.which("wrk") is not None


def parse(report: str) -> WrkResult:
    """Read wrk's ``--latency`` report; ValueError when a figure is missing."""
    rate, total, p99 = _RATE.search(report), _TOTAL.search(report), _P99.search(report)
    if not (rate and total and p99):
        raise ValueError(f"not a wrk --latency report:\n{report}")
    non_2xx = _NON_2XX.search(report)
    socket = _SOCKET.search(report)
    return WrkResult(
        requests=int(total.group(1)),
        rate=float(rate.group(1)),
        p99=float(p99.group(1)) * _UNITS[p99.group(2)],
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=sum(int(n) for n in socket.groups()) if socket else 0,
    )


def _options(headers: dict[str, str]) -> list[str]:
    options = ["-t", str(THREADS), "-c", str(CONNECTIONS)]
    for name, value in headers.items():
        options += ["-H", f"{name}: {value}"]
    return options


def warm_up(url: str, headers: dict[str, str]) -> None:
    """Load ``url`` for the warm-up time, figures unread."""
    _wrk([*_options(headers), "-d", WARMUP, url])


def run(url: str, duration: str, headers: dict[str, str]) -> WrkResult:
    """Load ``url`` for ``duration`` and return wrk's figures."""
    return parse(_wrk([*_options(headers), "-d", duration, "--latency", url]))


def _wrk(args: list[str]) -> str:
    done = subprocess.run(["wrk", *args], capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr or done.stdout}")
    return done.stdout
