"""The HTTP benchmark's table: req/s, p99 and the station's ratios, printed after the run.

The bench file fills :data:`LINES`; ``conftest.py`` beside it prints them in pytest's summary,
where ``-q`` and output capture do not hide them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from benchmarks.http.wrk import WrkResult

LINES: list[str] = []
SERVERS = {"station": "station", "falcon": "bare Falcon", "flask": "bare Flask"}


Results = Mapping[tuple[str, str], Sequence[WrkResult]]


def median_rate(rounds: Sequence[WrkResult]) -> float:
    """Return the median requests per second of a server's rounds."""
    return statistics.median(result.rate for result in rounds)


def median_p99(rounds: Sequence[WrkResult]) -> float:
    """Return the median 99th percentile latency (seconds) of a server's rounds."""
    return statistics.median(result.p99 for result in rounds)


def median_cpu(rounds: Sequence[WrkResult]) -> float:
    """Return the median server CPU seconds per request of a server's rounds."""
    return statistics.median(result.cpu_per_request for result in rounds)


def cpu_ratio(results: Results, route: str, peer: str) -> float:
    """Return the peer's CPU per request over the station's (above 1: the station uses less)."""
    return median_cpu(results[(peer, route)]) / median_cpu(results[("station", route)])


def ratio(results: Results, route: str, peer: str) -> float:
    """Return the station's median requests per second over the peer's on ``route``."""
    return median_rate(results[("station", route)]) / median_rate(results[(peer, route)])


def render(results: Results, routes: Mapping[str, str], how: str) -> list[str]:
    """Return the table lines for every route measured."""
    lines = [
        f"HTTP end to end ({how})",
        f"{'route':22} {'server':12} {'req/s':>7} {'p99':>9} {'CPU/req':>9}  (req/s of each round)",
    ]
    for route, path in routes.items():
        if ("station", route) not in results:
            continue
        for server, label in SERVERS.items():
            rounds = results[(server, route)]
            each = "/".join(f"{result.rate:.0f}" + ("*" * (result.tries - 1)) for result in rounds)
            lines.append(
                f"{path if server == 'station' else '':22} {label:12} "
                f"{median_rate(rounds):7.0f} {median_p99(rounds) * 1000:7.2f}ms "
                f"{median_cpu(rounds) * 1e6:7.0f}us  ({each})"
            )
        lines.append(
            f"{'':22} req/s ratio station/bare Falcon {ratio(results, route, 'falcon'):.2f}x, "
            f"station/Flask {ratio(results, route, 'flask'):.2f}x"
        )
        lines.append(
            f"{'':22} CPU/req ratio bare Falcon/station {cpu_ratio(results, route, 'falcon'):.2f}x,"
            f" Flask/station {cpu_ratio(results, route, 'flask'):.2f}x"
        )
    if any(result.tries > 1 for rounds in results.values() for result in rounds):
        lines.append(
            "* each star: a run made again because one gunicorn worker got every connection"
        )
    return lines
