"""A generated access log with the shape of a real one (the import benchmark against GoAccess).

What a real public site's log holds, and a log of a handful of agents in time order does not:

- thousands of distinct user agents, a few browsers' builds common and a long tail of rare ones,
  crawlers (named bots and anonymous ones) and tools (curl, python, Go, Java);
- visits: a page, then its assets and more pages, each with the page before as its referrer, so
  most referrers are the site itself (``SITE_HOST``, self-referrals); the first page of a visit
  comes from nowhere, a search engine (with a phrase) or another site;
- IPv4 and IPv6 clients (about a fifth IPv6, many /64 networks);
- lines out of time order: each line is written when its answer ends (its time is when the
  request came), and some stretches of a day arrive in a burst later (a second server's buffer
  written late), a few of them after the next day has begun;
- busy days (a mention on a news site, a crawler gone wild) of more than 100,000 lines when the
  log is large, among quiet days of a few thousand;
- scanners probing for ``/wp-login.php`` and ``/.env`` answered 404.

Seeded: the same arguments give the same log.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path

from tests.traffic.accesslog import varied_agents

SITE_HOST = "alerts.example.org"
#: Share of the lines on the busy days (``BUSY_DAYS`` of them, alike).
BUSY_SHARE = 0.36
BUSY_DAYS = 3
_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
_COMMON_AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 "
    "Safari/537.36 Edg/130.0.0.0",
]
_BOTS = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
    "+https://openai.com/gptbot)",
]
_TOOLS = ["curl/8.5.0", "python-requests/2.32.3", "Go-http-client/1.1", "Wget/1.21.4", "-"]
_PAGES = ["/", "/alerts", "/status", "/about.html", "/feed.xml", "/zones", "/help"]
_ASSETS = [
    "/static/app.3f9a1c.css",
    "/static/app.81be02.js",
    "/static/logo.svg",
    "/favicon.ico",
    "/static/fonts/inter.woff2",
]
_SCANS = ["/wp-login.php", "/.env", "/xmlrpc.php", "/.git/config", "/phpmyadmin/", "/admin.php"]
_SEARCH = [
    "https://www.google.com/search?q={}",
    "https://www.bing.com/search?q={}",
    "https://duckduckgo.com/?q={}",
]
_WORDS = "tornado warning weather alert county flood watch radio eas test today".split()
_SITES = [f"https://news{n}.example.net/story/{n * 7}" for n in range(60)] + [
    "https://t.co/x1",
    "https://www.facebook.com/",
    "https://www.reddit.com/r/weather/",
    "android-app://com.google.android.gm/",
]


def _agents(rng: random.Random, distinct: int) -> tuple[list[str], list[float]]:
    """Return the agents and their weights: a few common browsers, a long tail, bots, tools."""
    tail = varied_agents(distinct, seed=rng.randrange(1 << 30))
    agents = _COMMON_AGENTS + _BOTS + _TOOLS + tail
    weights = [40.0 / (rank + 1) for rank in range(len(_COMMON_AGENTS))]
    weights += [1.5] * len(_BOTS) + [0.8] * len(_TOOLS)
    weights += [1.0 / (rank + 10) ** 0.8 for rank in range(len(tail))]
    return agents, weights


def _clients(rng: random.Random, count: int) -> list[str]:
    """Return ``count`` client addresses, about a fifth IPv6 (several per /64 at times)."""
    out = []
    for _ in range(count):
        if rng.random() < 0.2:
            net = f"2001:db8:{rng.randrange(1 << 16):x}:{rng.randrange(1 << 12):x}"
            out.append(f"{net}::{rng.randrange(1, 1 << 16):x}")
        else:
            out.append(f"{rng.choice((198, 203, 192))}.{rng.randrange(256)}.{rng.randrange(256)}"
                       f".{rng.randrange(1, 255)}")  # fmt: skip
    return out


def _day_sizes(rng: random.Random, count: int, days: int) -> list[int]:
    """Return the lines of each day: ``BUSY_DAYS`` busy days, the rest by weekday and chance."""
    busy = rng.sample(range(days // 4, days - 2), BUSY_DAYS)
    quiet_total = count - int(count * BUSY_SHARE)
    weights = [(1.3 if day % 7 < 5 else 0.8) * rng.uniform(0.6, 1.4) for day in range(days)]
    for day in busy:
        weights[day] = 0.0
    scale = quiet_total / sum(weights)
    sizes = [int(weight * scale) for weight in weights]
    for day in busy:
        sizes[day] = int(count * BUSY_SHARE) // BUSY_DAYS
    sizes[-1] += count - sum(sizes)  # whatever rounding left
    return sizes


def _stamp(prefix: str, second: int) -> str:
    """Return the logged time of ``second`` into the day whose ``dd/Mon/yyyy:`` is ``prefix``."""
    hour, rest = divmod(second, 3600)
    return f"{prefix}{hour:02d}:{rest // 60:02d}:{rest % 60:02d} +0000"


def _day_lines(rng: random.Random, base: datetime, size: int, pools: tuple) -> list[tuple]:
    """Return (time the line is written, line) of one day's ``size`` lines."""
    clients, agents, weights, alert_ids = pools  # weights: cumulative
    prefix = f"{base.day:02d}/{_MONTHS[base.month - 1]}/{base.year}:"
    chance = rng.random
    lines: list[tuple[float, str]] = []
    while len(lines) < size:
        client = rng.choice(clients)
        agent = rng.choices(agents, cum_weights=weights)[0]
        start = rng.randrange(86_400)
        bot = "bot" in agent.lower() or agent in _TOOLS or agent.startswith(("curl", "facebook"))
        if rng.random() < 0.01:  # a scanner
            requests = [(path, 404, "-") for path in rng.sample(_SCANS, rng.randint(2, 6))]
        else:
            requests = []
            referrer = "-"
            roll = rng.random()
            if not bot and roll < 0.3:
                words = "+".join(rng.sample(_WORDS, rng.randint(1, 3)))
                referrer = rng.choice(_SEARCH).format(words)
            elif not bot and roll < 0.45:
                referrer = rng.choice(_SITES)
            for _ in range(min(1 + int(rng.expovariate(0.5)), 12)):
                page = rng.choice(_PAGES)
                if rng.random() < 0.5:
                    page = f"/alerts/{rng.choice(alert_ids)}"
                if rng.random() < 0.08:
                    page += f"?page={rng.randint(1, 9)}"
                requests.append((page, 200 if rng.random() < 0.97 else 500, referrer))
                own = f"https://{rng.choice((SITE_HOST, 'www.' + SITE_HOST))}{page}"
                if not bot:
                    for asset in rng.sample(_ASSETS, rng.randint(0, 3)):
                        requests.append((asset, 304 if rng.random() < 0.4 else 200, own))
                referrer = own
        second = start
        for path, status, referrer in requests:
            if second >= 86_400:
                break
            size_bytes = 0 if status == 304 else 200 + int(chance() * 80_000)
            method = "POST" if chance() < 0.01 else "GET"
            line = (
                f'{client} - - [{_stamp(prefix, second)}] "{method} {path} HTTP/1.1" {status} '
                f'{size_bytes} "{referrer}" "{agent}"'
            )
            # Written when the answer ends: a few milliseconds to several seconds later.
            lines.append((second + rng.expovariate(2.0), line))
            second += int(chance() * 41)
    del lines[size:]
    lines.sort()
    return lines


def lines(count: int, end: datetime, days: int = 400, seed: int = 7) -> Iterator[str]:
    """Yield ``count`` lines over the ``days`` UTC days before ``end``'s day, as the server wrote
    them (see the module's text)."""
    rng = random.Random(seed)
    agents, weights = _agents(rng, max(50, min(8_000, count // 4)))
    weights = list(accumulate(weights))
    clients = _clients(rng, max(200, count // 20))
    alert_ids = list(range(1, max(50, count // 400)))
    pools = (clients, agents, weights, alert_ids)
    first = (end - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
    held: list[str] = []  # a burst written late, after the next day has begun
    for index, size in enumerate(_day_sizes(rng, count, days)):
        day = _day_lines(rng, first + timedelta(days=index), size, pools)
        out = [line for _, line in day]
        if held:  # yesterday's late burst, a few hundred lines into today
            cut = min(len(out), rng.randint(100, 500))
            out[cut:cut] = held
            held = []
        if len(out) > 50 and rng.random() < 0.3:
            # A stretch of the day written in a burst an hour or so later.
            width = max(1, len(out) // rng.randint(20, 60))
            start = rng.randrange(len(out) - width)
            burst = out[start : start + width]
            del out[start : start + width]
            later = min(len(out), start + len(out) // 24)
            out[later:later] = burst
        if len(out) > 50 and index < days - 1 and rng.random() < 0.1:
            width = max(1, len(out) // 100)
            held = out[-width:]
            del out[-width:]
        yield from out
    yield from held


def write(path: Path, count: int, end: datetime | None = None, seed: int = 7) -> Path:
    """Write ``count`` generated lines to ``path`` (see ``lines``); return the path."""
    end = end or datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with path.open("w") as out:
        for line in lines(count, end, seed=seed):
            out.write(line)
            out.write("\n")
    return path
