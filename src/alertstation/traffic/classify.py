"""What kind of request a row is: page view or not, file type, referrer domain, search phrase.

Definitions (``docs/traffic.md``): a page view is a GET answered 2xx or 304 for a page, that is
neither a static file (under ``/static/`` or a path whose last segment has a file extension
other than .html/.htm) nor an API call (under ``/api/``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

_Text = TypeVar("_Text", str, None)

API_PREFIX = "/api/"
STATIC_PREFIX = "/static/"
_PAGE_EXTENSIONS = frozenset({"html", "htm"})
# Search engines by the registrable part of their host, and the query parameter of the phrase.
SEARCH_ENGINES: dict[str, tuple[str, str]] = {
    "google": ("Google", "q"),
    "bing": ("Bing", "q"),
    "duckduckgo": ("DuckDuckGo", "q"),
    "yahoo": ("Yahoo", "p"),
    "yandex": ("Yandex", "text"),
    "baidu": ("Baidu", "wd"),
    "ecosia": ("Ecosia", "q"),
    "qwant": ("Qwant", "q"),
    "startpage": ("Startpage", "query"),
    "search.brave": ("Brave", "q"),
}


def is_api(path: str) -> bool:
    """Tell whether the path is an API call."""
    return path.startswith(API_PREFIX) or path == API_PREFIX[:-1]


@lru_cache(maxsize=8192)
def file_type(path: str) -> str | None:
    """Return the lower-case extension of the path's last segment (``css``), or None."""
    last = path.rsplit("/", 1)[-1]
    if "." not in last:
        return None
    extension = last.rsplit(".", 1)[-1].lower()
    return extension if 0 < len(extension) <= 16 and extension.isalnum() else None


def is_static(path: str) -> bool:
    """Tell whether the path is a static file rather than a page."""
    if path.startswith(STATIC_PREFIX):
        return True
    extension = file_type(path)
    return extension is not None and extension not in _PAGE_EXTENSIONS


def is_page_view(method: str, path: str, status: int) -> bool:
    """Tell whether the request is a page view (GET, 2xx or 304, neither static nor API)."""
    if method != "GET" or not (200 <= status < 300 or status == 304):
        return False
    return not is_api(path) and not is_static(path)


def before_nul(value: _Text) -> _Text:
    """Return text up to its first NUL character (all of it when it has none).

    A NUL reaches a row from a decoded ``%00`` in a path or query, or from a header or a log
    field. PostgreSQL refuses it in text, which failed the whole batch the row was in; the text
    is cut there on both backends, as C tools such as GoAccess read it.
    """
    if value is None or "\x00" not in value:
        return value
    return value[: value.index("\x00")]


@lru_cache(maxsize=4096)
def referrer_parts(
    referrer: str | None, own_host: str | None
) -> tuple[str | None, str | None, str | None]:
    """Return (domain, search engine, search phrase) of a referrer; self-referrals give no domain.

    ``own_host`` is the Host the request was sent to; a referrer on the same host (``www.``
    ignored) is the station's own page and is not an outside referrer.
    """
    if not referrer:
        return None, None, None
    try:
        parts = urlsplit(referrer.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return None, None, None
    if not host:
        return None, None, None
    host = host.removeprefix("www.")
    if own_host and host == own_host.lower().split(":", 1)[0].removeprefix("www."):
        return None, None, None
    engine = _search_engine(host)
    if engine is None:
        return host[:255], None, None
    name, parameter = engine
    phrase = before_nul((parse_qs(parts.query).get(parameter) or [""])[0]).strip()
    return host[:255], name, " ".join(phrase.split())[:255] or None


def _search_engine(host: str) -> tuple[str, str] | None:
    labels = host.split(".")
    for key, engine in SEARCH_ENGINES.items():
        if "." in key:
            if host == key + "." + labels[-1] or host.endswith("." + key + "." + labels[-1]):
                return engine
        elif key in labels[:-1]:
            return engine
    return None
