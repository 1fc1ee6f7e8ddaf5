"""Recognise malicious requests: scanner paths, traversal, injection probes and scanner agents.

Every signature lives in this module, compiled into three patterns, one per place a probe shows:
the path (already percent-decoded once by the framework), the query string (decoded once more
here, so single- and double-encoded probes both show) and the User-Agent header. ``probe_of``
returns a short label of the first signature found, or None. Verdicts are remembered per text in
small bounded tables, so the usual request (a path, query and agent seen before) costs two or
three dictionary lookups.

The station serves no PHP, ASP or CGI and has no WordPress, database console or dot-files, so a
request for one of those is a probe, never a mistyped link. Signatures are chosen so that a
person using the station cannot hit them: no ordinary words, only attack syntax.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote_plus

# Path segments and file names scanners ask for (a whole segment, anywhere in the path).
_SCANNER_SEGMENTS = (
    r"wp-admin|wp-login\.php|wp-content|wp-includes|wp-config\.php[^/]*|wp-json|xmlrpc\.php",
    r"wordpress|phpmyadmin[^/]*|myadmin|mysqladmin|pma|adminer[^/]*|dbadmin|sqladmin",
    r"\.env(?:\.[^/]*)?|\.git|\.svn|\.hg|\.bzr|\.ds_store|\.aws|\.ssh|\.htaccess|\.htpasswd",
    r"\.vscode|\.idea|\.docker|\.npmrc|\.bash_history|id_rsa[^/]*",
    r"cgi-bin|phpunit|eval-stdin\.php|boaform|hnap1|actuator|solr|owa|autodiscover|ecp",
    r"shell\.php|cmd\.exe|win\.ini|boot\.ini|web\.config|server-status|config\.json\.bak",
)
# File types the station never serves.
_SCANNER_SUFFIXES = r"\.(?:php\d?|phtml|asp|aspx|ashx|jsp|jspx|cgi|pl|sql|bak|old|swp|tar\.gz|zip)"
_TRAVERSAL = r"\.\./|\.\.\\|/\.\.$|%2e%2e|%252e|\.\.%2f|%c0%ae|\x00|%00"

_PATH = re.compile(
    rf"(?P<traversal>{_TRAVERSAL})"
    rf"|(?:^|/)(?P<scanner>(?:{'|'.join(_SCANNER_SEGMENTS)}))(?=/|$)"
    rf"|(?P<script>{_SCANNER_SUFFIXES})$"
    r"|(?P<system>/etc/(?:passwd|shadow|hosts)|/proc/self/)",
    re.IGNORECASE,
)

_QUERY = re.compile(
    r"(?P<sqli>\bunion[\s/*()+]+(?:all[\s/*()+]+)?select\b"
    r"|'\s*(?:or|and)\s+'?\w+'?\s*=\s*'?\w+|\b(?:or|and)\s+\d+\s*=\s*\d+"
    r"|\b(?:sleep|pg_sleep|benchmark|load_file|extractvalue|updatexml)\s*\("
    r"|information_schema|\binto\s+(?:out|dump)file\b|waitfor\s+delay|xp_cmdshell"
    r"|;\s*(?:drop|truncate|alter)\s+table\b|@@version)"
    r"|(?P<xss><\s*/?\s*(?:script|iframe|svg|img|body|object|embed)\b|javascript\s*:"
    r"|\bon(?:error|load|mouseover|focus|click)\s*=|document\.cookie|\balert\s*\(\s*['\"\d])"
    r"|(?P<shell>(?:[;|`]|&&)\s*(?:cat|wget|curl|bash|sh|nc|ncat|id|uname|whoami|ping|chmod|rm)\b"
    r"|\$\([^)]*\)|`[^`]+`|/bin/(?:ba)?sh\b|\$\{jndi:|\$\{(?:ifs|env:))"
    r"|(?P<traversal>\.\./|\.\.\\|/etc/(?:passwd|shadow)|\b(?:php|file|expect|zip|phar)://)",
    re.IGNORECASE | re.DOTALL,
)

_USER_AGENT = re.compile(
    r"\$\{jndi:|\b(?:sqlmap|nikto|nessus|masscan|zgrab|nuclei|wpscan|dirbuster|gobuster|ffuf"
    r"|acunetix|openvas|w3af|havij|jaeles|netsparker|appscan|nmap scripting engine)\b",
    re.IGNORECASE,
)

LABELS = {
    "traversal": "path traversal",
    "scanner": "scanner path",
    "script": "script file",
    "system": "system file",
    "sqli": "SQL injection",
    "xss": "script injection",
    "shell": "shell injection",
}
MAX_SHOWN = 80
CACHE_SIZE = 4096
CACHE_TEXT_MAX = 1024  # longer texts are judged every time, so the tables stay small


class _Verdicts:
    """Remember the verdict on recently seen texts (paths, queries and agents repeat a lot).

    Bounded: emptied when full. Reads and writes are single dict operations, safe across threads.
    """

    def __init__(self, compute: Callable[[str], str | None], size: int = CACHE_SIZE) -> None:
        self._compute = compute
        self._size = size
        self._seen: dict[str, str | None] = {}

    def __call__(self, text: str) -> str | None:
        try:
            return self._seen[text]
        except KeyError:
            pass
        verdict = self._compute(text)
        if len(text) > CACHE_TEXT_MAX:
            return verdict
        if len(self._seen) >= self._size:
            self._seen.clear()
        self._seen[text] = verdict
        return verdict


def _path_probe(path: str) -> str | None:
    match = _PATH.search(path)
    return _label(match) if match is not None else None


def _query_probe(query: str) -> str | None:
    text = query
    for _ in range(3):  # as sent, decoded once, decoded twice (double-encoded probes)
        match = _QUERY.search(text)
        if match is not None:
            return "query " + _label(match)
        if "%" not in text and "+" not in text:
            break
        text = unquote_plus(text)
    return None


def _agent_probe(user_agent: str) -> str | None:
    match = _USER_AGENT.search(user_agent)
    return f"scanner user agent: {match.group(0)[:MAX_SHOWN]!r}" if match is not None else None


_path_verdict = _Verdicts(_path_probe)
_query_verdict = _Verdicts(_query_probe)
_agent_verdict = _Verdicts(_agent_probe)


def probe_of(path: str, query: str, user_agent: str | None) -> str | None:
    """Return a label of the probe in a request (``scanner path: '/wp-login.php'``) or None."""
    return (
        _path_verdict(path)
        or (_query_verdict(query) if query else None)
        or (_agent_verdict(user_agent) if user_agent else None)
    )


def _label(match: re.Match[str]) -> str:
    name = match.lastgroup or ""
    return f"{LABELS.get(name, name)}: {match.group(0)[:MAX_SHOWN]!r}"
