"""Generated access logs in nginx combined format (the import tests and the benchmark use them)."""

from __future__ import annotations

import gzip
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "curl/8.4.0",
]
PATHS = [
    "/",
    "/alerts",
    "/alerts/17",
    "/status",
    "/about.html",
    "/static/app.css",
    "/static/app.js",
    "/logo.png",
    "/wp-login.php",
    "/feed.xml",
]
REFERRERS = ["-", "-", "https://www.google.com/search?q=eas+alerts", "https://example.org/news"]
STATUSES = [200, 200, 200, 200, 304, 301, 404, 500]
#: What a log facing the internet also holds (``lines(..., odd=True)``): request lines that are
#: "-" or not HTTP, odd methods and protocols, encoded and absolute-form targets, API calls,
#: loopback health checks (which the default collection settings leave out) and a client logged
#: by name (Apache's HostnameLookups), a line neither the import nor GoAccess can read.
ODD_REQUESTS = [
    "-",
    "\\x16\\x03\\x01\\x00\\xF4\\x01\\x00\\x00\\xF0\\x03\\x03",
    "SSH-2.0-Go",
    "PRI * HTTP/2.0",
    "get /alerts HTTP/1.1",
    "GET /",
    "GET /status HTTP/9.9",
    "PROPFIND /dav HTTP/1.1",
    "CONNECT example.com:443 HTTP/1.1",
    "GET http://example.com/ HTTP/1.1",
    "GET /a%20b/%7Euser?x=%3F HTTP/1.1",
    "GET /caf%C3%A9 HTTP/2.0",
    "GET /bad%zz HTTP/1.1",
    "GET /sp ace HTTP/1.1",
    "POST /api/alerts HTTP/1.1",
    "GET /api/broadcast/state HTTP/1.1",
    "GET /index.php%00.jpg HTTP/1.1",
    "get\t/tab HTTP/1.1",
    " GET /lead HTTP/1.1 ",
    "GET   /spaced%20 HTTP/1.1",
    "GETTER /x HTTP/1.1",
    "FOO /x?y=1",
    "GET ? HTTP/1.1",
    "GET /w HTTP/1.1x",
]
#: Status codes an odd line may have: one GoAccess reports as "Unknown", and ones outside
#: 100-599, which make the line one neither the import nor GoAccess can read.
ODD_STATUSES = ["299", "000", "099", "600"]
ODD_HOSTS = ["127.0.0.1", "::1", "crawler.example.net"]
#: The time of a line, as nginx and Apache write it.
TIME = "%d/%b/%Y:%H:%M:%S +0000"


def varied_agents(count: int, seed: int = 5) -> list[str]:
    """Return ``count`` seeded user agents in the shapes real logs are full of (browser builds,
    phones, crawlers, libraries), nearly all distinct."""
    rng = random.Random(seed)
    shapes = [
        lambda: (
            f"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{rng.randint(60, 131)}.0.{rng.randint(1000, 6999)}.{rng.randint(1, 250)} "
            "Safari/537.36"
        ),
        lambda: (
            f"Mozilla/5.0 (Linux; Android {rng.randint(8, 14)}; SM-{rng.choice('AGSN')}"
            f"{rng.randint(100, 999)}{rng.choice('BFUW')}) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{rng.randint(90, 131)}.0.{rng.randint(1000, 6999)}.0 Mobile Safari/537.36"
        ),
        lambda: (
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {rng.randint(12, 18)}_{rng.randint(0, 6)} like "
            f"Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{rng.randint(12, 18)}."
            f"{rng.randint(0, 6)} Mobile/15E{rng.randint(100, 999)} Safari/604.1"
        ),
        lambda: (
            f"Mozilla/5.0 (X11; {rng.choice(['Linux x86_64', 'Ubuntu; Linux x86_64'])}; rv:"
            f"{rng.randint(60, 133)}.0) Gecko/20100101 Firefox/{rng.randint(60, 133)}.0"
        ),
        lambda: (
            f"Mozilla/5.0 (compatible; Crawler{rng.randint(1, 5000)}/{rng.randint(1, 9)}."
            f"{rng.randint(0, 9)}; +https://crawler{rng.randint(1, 5000)}.example/bot)"
        ),
        lambda: f"{rng.choice(['curl', 'Wget', 'python-httpx', 'Java'])}/{rng.randint(1, 9)}.0",
    ]
    return [rng.choice(shapes)() for _ in range(count)]


def lines(
    count: int,
    end: datetime,
    days: int = 30,
    seed: int = 11,
    odd: bool = False,
    agents: list[str] | None = None,
) -> list[str]:
    """Return ``count`` combined-format lines spread over ``days`` days before ``end``, in
    time order, from a few hundred IPv4 and IPv6 addresses, with user agents from ``agents``
    (``AGENTS`` unless given); with ``odd``, about one in five has an ``ODD_REQUESTS`` request
    line, a tenth of those from ``ODD_HOSTS`` (and a tenth with an ``ODD_STATUSES`` status), and
    one in fifty two spaces after the address."""
    rng = random.Random(seed)
    agents = agents or AGENTS
    v4 = [f"198.51.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(300)]
    v6 = [f"2001:db8:{rng.randint(0, 65535):x}::{rng.randint(1, 65535):x}" for _ in range(60)]
    hosts = v4 + v6
    start = end - timedelta(days=days)
    span = days * 86_400
    stamps = sorted(rng.randrange(span) for _ in range(count))
    out = []
    for offset in stamps:
        moment = start + timedelta(seconds=offset)
        status = rng.choice(STATUSES)
        method = "POST" if rng.random() < 0.03 else "GET"
        query = f"?page={rng.randint(1, 3)}" if rng.random() < 0.1 else ""
        size = 0 if status == 304 else rng.randint(100, 60_000)
        host, request = rng.choice(hosts), f"{method} {rng.choice(PATHS)}{query} HTTP/1.1"
        if odd and rng.random() < 0.2:
            request = rng.choice(ODD_REQUESTS)
            host = rng.choice(ODD_HOSTS) if rng.random() < 0.1 else host
            status = rng.choice(ODD_STATUSES) if rng.random() < 0.1 else status
        gap = "  " if odd and rng.random() < 0.02 else " "  # read alike by GoAccess and us
        out.append(
            f"{host}{gap}- - [{moment.strftime(TIME)}] "
            f'"{request}" {status} {size} '
            f'"{rng.choice(REFERRERS)}" "{rng.choice(agents)}"'
        )
    return out


def write(
    path: Path,
    count: int,
    end: datetime | None = None,
    seed: int = 11,
    odd: bool = False,
    agents: list[str] | None = None,
) -> Path:
    """Write a generated log (gzipped when ``path`` ends in .gz); return the path."""
    end = end or datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    text = "\n".join(lines(count, end, seed=seed, odd=odd, agents=agents)) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def goaccess_statuses(report: dict[str, Any]) -> tuple[dict[int, int], int]:
    """Return the hits of each status code a GoAccess JSON report names, and of those it
    reports only as "Unknown" (codes it has no name for, whichever family it files them in)."""
    known: dict[int, int] = {}
    unknown = 0
    for family in report["status_codes"]["data"]:
        for item in family["items"]:
            code = item["data"][:3]
            if code.isdigit():
                known[int(code)] = item["hits"]["count"]
            else:
                unknown += item["hits"]["count"]
    return known, unknown


def assert_statuses_agree(ours: dict[int, int], report: dict[str, Any]) -> None:
    """Fail unless our hits by status match GoAccess's: code by code where it names the code,
    and in total for the codes it reports as "Unknown"."""
    known, unknown = goaccess_statuses(report)
    assert {code: hits for code, hits in ours.items() if code in known} == known
    assert sum(hits for code, hits in ours.items() if code not in known) == unknown


def import_rows(count: int, folder: Path) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Return the rows and import keys of a generated log of ``count`` lines ending this hour,
    read by the import's own reader with every line kept (as ``traffic import --all``)."""
    from alertstation.traffic import importer  # here: the generator itself needs no station
    from alertstation.traffic.enrich import RowEnricher
    from alertstation.traffic.settings import TrafficSettings

    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    log = write(folder / "access.log", count, end)
    enricher = RowEnricher(importer.import_settings(TrafficSettings(), True), None)
    reader = importer.LineRows(enricher, "combined", 0.0, float("inf"), float("-inf"), count + 1)
    with log.open("rb") as handle:
        batches = list(reader.batches(handle, importer.ImportResult()))
    rows = [row for batch, _keys, _days in batches for row in batch]
    keys = [key for _rows, batch, _days in batches for key in batch]
    return rows, keys
