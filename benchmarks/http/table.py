"""The HTTP benchmark's table: req/s, p99 and the station's ratios, printed after the run.

The bench file fills :data:`LINES`; ``conftest.py`` beside it prints them in pytest's summary,
where ``-q`` and output capture do not hide them.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchmarks.http.wrk import WrkResult

LINES: list[str] = []
SERVERS = {"station": "station", "falcon": "bare Falcon", "flask": "bare Flask"}


def ratio(results: Mapping[tuple[str, str], WrkResult], route: str, peer: str) -> float:
    """Return the station's requests per second over the peer's on ``route``."""
    return results[("station", route)].rate / results[(peer, route)].rate


def render(
    results: Mapping[tuple[str, str], WrkResult], routes: Mapping[str, str], how: str
) -> list[str]:
    """Return the table lines for every route measured."""
    lines = [f"HTTP end to end ({how})", f"{'route':24} {'server':12} {'req/s':>9} {'p99':>9}"]
    for route, path in routes.items():
        if ("station", route) not in results:
            continue
        for server, label in SERVERS.items():
            result = results[(server, route)]
            lines.append(
                f"{path if server == 'station' else '':24} {label:12} "
                f"{result.rate:9.0f} {result.p99 * 1000:7.2f}ms"
            )
        lines.append(
            f"{'':24} ratio station/bare Falcon {ratio(results, route, 'falcon'):.2f}x, "
            f"station/Flask {ratio(results, route, 'flask'):.2f}x"
        )
    return lines
