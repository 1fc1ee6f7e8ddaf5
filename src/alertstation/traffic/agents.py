"""What a request says about its client: browser, OS, device and bot (ua-parser), language.

User agents are parsed with the maintained ua-parser library and its regex set, never with
hand-written patterns; each distinct agent string is parsed once per process (LRU cache).

ua-parser runs its regex set with the best resolver installed: ``ua-parser-rs`` (its compiled
companion, a dependency of the station wherever a wheel exists: x86_64 and aarch64 Linux) reads a
new agent in tens of microseconds, where its pure-Python resolver takes about a millisecond. The
two give the same parts for agents written in ASCII (``tests/traffic/test_agent_resolvers.py``);
``docs/traffic.md`` says where they differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from alertstation import lazy

if TYPE_CHECKING:
    from ua_parser import Result

# Loaded with its regex set when the first agent is read (with PyYAML: about 2 MiB).
ua_parser = lazy.module("ua_parser")

MAX_AGENT = 512
_TABLET_DEVICES = ("ipad", "tablet", "kindle", "tab ")
_MOBILE_OS = frozenset({"ios", "android", "windows phone", "blackberry os", "kaios"})
_DESKTOP_OS = frozenset({"windows", "mac os x", "linux", "ubuntu", "chrome os", "fedora"})


@dataclass(frozen=True, slots=True)
class Agent:
    """The parts of a user agent the reports group by."""

    browser: str | None
    browser_version: str | None
    os: str | None
    device_type: str | None
    is_bot: bool


NO_AGENT = Agent(None, None, None, None, False)


#: What ua-parser calls its resolvers, fastest first (``resolver_name``).
RESOLVERS = {"regex": "ua-parser-rs", "re2": "google-re2", "basic": "pure Python"}
SLOW_RESOLVER = RESOLVERS["basic"]


def resolver_name() -> str:
    """Return which of ua-parser's resolvers parses agents here (a ``RESOLVERS`` value)."""
    resolver = getattr(ua_parser.parser.resolver, "parser", ua_parser.parser.resolver)
    return RESOLVERS.get(type(resolver).__module__.rpartition(".")[2], type(resolver).__name__)


@lru_cache(maxsize=8192)
def parse_agent(user_agent: str | None) -> Agent:
    """Return browser, version, OS, device type (desktop/mobile/tablet/bot/other) and bot flag."""
    return describe(user_agent, ua_parser.parse)


def describe(user_agent: str | None, parse: Callable[[str], Result]) -> Agent:
    """Return the parts of ``user_agent`` as ``parse`` (a ua-parser parse function) reads it;
    ``parse_agent`` without its cache, with the parse function given."""
    if not user_agent:
        return NO_AGENT
    result = parse(user_agent[:MAX_AGENT])
    browser = result.user_agent.family if result.user_agent else None
    version = result.user_agent.major if result.user_agent else None
    os_name = result.os.family if result.os else None
    device = result.device.family if result.device else None
    is_bot = device == "Spider"
    return Agent(
        browser=browser if browser and browser != "Other" else None,
        browser_version=version[:32] if version else None,
        os=os_name if os_name and os_name != "Other" else None,
        device_type=_device_type(device, os_name, is_bot),
        is_bot=is_bot,
    )


def _device_type(device: str | None, os_name: str | None, is_bot: bool) -> str:
    if is_bot:
        return "bot"
    family = (device or "").lower()
    if any(mark in family for mark in _TABLET_DEVICES):
        return "tablet"
    os_family = (os_name or "").lower()
    if os_family in _MOBILE_OS:
        return "mobile"
    if os_family in _DESKTOP_OS or family in ("", "other", "mac"):
        return "desktop" if os_family else "other"
    return "mobile"


@lru_cache(maxsize=1024)
def primary_language(accept_language: str | None) -> str | None:
    """Return the most preferred language tag of an Accept-Language header (``en-US``), or None."""
    if not accept_language:
        return None
    best: tuple[float, int, str] | None = None
    for index, part in enumerate(accept_language[:256].split(",")):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        if not tag or tag == "*" or len(tag) > 32:
            continue
        quality = 1.0
        params = params.strip()
        if params.startswith("q="):
            try:
                quality = float(params[2:])
            except ValueError:
                continue
        if quality <= 0:
            continue
        key = (-quality, index, tag)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    primary, _, region = best[2].partition("-")
    return f"{primary.lower()}-{region.upper()}" if region else primary.lower()
