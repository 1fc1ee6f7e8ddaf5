"""Generated access logs in nginx combined format (the import tests and the benchmark use them)."""

from __future__ import annotations

import gzip
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

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


def lines(count: int, end: datetime, days: int = 30, seed: int = 11) -> list[str]:
    """Return ``count`` combined-format lines spread over ``days`` days before ``end``, in
    time order, from a few hundred IPv4 and IPv6 addresses."""
    rng = random.Random(seed)
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
        out.append(
            f"{rng.choice(hosts)} - - [{moment.strftime('%d/%b/%Y:%H:%M:%S +0000')}] "
            f'"{method} {rng.choice(PATHS)}{query} HTTP/1.1" {status} {size} '
            f'"{rng.choice(REFERRERS)}" "{rng.choice(AGENTS)}"'
        )
    return out


def write(path: Path, count: int, end: datetime | None = None, seed: int = 11) -> Path:
    """Write a generated log (gzipped when ``path`` ends in .gz); return the path."""
    end = end or datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    text = "\n".join(lines(count, end, seed=seed)) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path
