"""The operator guides in ``web/guides/*.md``: found, rendered to HTML with markdown-it-py, and
searched.

They ship with the package as the rest of ``web/`` does (``alertstation.web.guides``). The
developer documentation in ``docs/`` is not served. A guide's name is its file name without
``.md``: ``web/guides/stop-a-message.md`` is ``/docs/stop-a-message``. Guides speak of pages,
buttons and commands, never of modules or repository paths (a test scans every one).

Rendering never passes raw HTML through (markdown-it's ``html`` option is off), so a guide cannot
inject script into the page. Links to ``other.md`` or ``docs/other.md`` and code spans naming
``docs/other.md`` become links to ``/docs/other`` when that guide exists.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alertstation import lazy
from alertstation.errors import Invalid, NotFound

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Loaded when the first guide is rendered, not when the web app starts.
markdown_it = lazy.module("markdown_it")

GUIDE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_GUIDE_REFERENCE = re.compile(r"^(?:\./)?(?:docs/)?([a-z0-9][a-z0-9-]{0,63})\.md(#[\w-]*)?$")
_MENTION = re.compile(r"\bdocs/([a-z0-9][a-z0-9-]{0,63})\.md\b")
_WORD = re.compile(r"[\w.-]+")

MAX_QUERY_CHARS = 200
MAX_QUERY_WORDS = 8
SNIPPET_CHARS = 90

# The theory pages: how the station's domain works, rather than how to operate a page of it.
THEORY = ("theory-same", "theory-cap", "theory-matching")
# The tasks, in the order an operator meets them; other guides follow by title.
TASKS = (
    "quick-start",
    "set-the-broadcast-area",
    "add-a-receiver-or-stream",
    "send-a-weekly-test",
    "approve-a-forward",
    "stop-a-message",
    "read-and-export-the-station-log",
    "back-up-and-restore",
    "upgrade",
    "release-notes",
)
# Names of guides the station once served, and the guide that now answers each: links kept in
# bookmarks and in older pages lead on to the task rather than to a 404.
MOVED = {
    "alerts-poller": "quick-start",
    "audio": "add-a-receiver-or-stream",
    "operations": "back-up-and-restore",
    "notifications": "quick-start",
    "traffic": "quick-start",
    "eas-manual": "stop-a-message",
    "eas-forward": "approve-a-forward",
    "eas-log": "read-and-export-the-station-log",
    "zones": "set-the-broadcast-area",
    "matching": "theory-matching",
}
RELEASE_NOTES = "release-notes"


def guides_dir() -> Path:
    """Return the folder the station reads its guides from (shipped inside the package)."""
    return Path(str(files("alertstation.web"))) / "guides"


@dataclass(frozen=True)
class Guide:
    """One guide: its name, title (the first heading), opening paragraph and Markdown text."""

    name: str
    title: str
    summary: str
    text: str

    @property
    def is_theory(self) -> bool:
        """Tell whether this guide explains theory (SAME, CAP, matching)."""
        return self.name in THEORY


@dataclass(frozen=True)
class SearchHit:
    """A guide that holds every word of a query: how often, and a snippet around the first."""

    guide: Guide
    score: int
    snippet: str


def parse_guide(name: str, text: str) -> Guide:
    """Build a Guide from a file's name and Markdown text."""
    title = name.replace("-", " ").capitalize()
    summary = ""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("# "):
            title = line[2:].strip()
            paragraph: list[str] = []
            for following in lines[index + 1 :]:
                if following.strip():
                    if following.startswith(("#", "|", "```", "-", "*")):
                        break
                    paragraph.append(following.strip())
                elif paragraph:
                    break
            summary = " ".join(paragraph)
            break
    return Guide(name=name, title=title, summary=summary, text=text)


def query_words(query: str) -> list[str]:
    """Split a search query into lower-case words; raise Invalid for an unusable query."""
    if len(query) > MAX_QUERY_CHARS:
        raise Invalid(f"the search is longer than {MAX_QUERY_CHARS} characters")
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    if len(words) > MAX_QUERY_WORDS:
        raise Invalid(f"the search has more than {MAX_QUERY_WORDS} words")
    return words


def _snippet(text: str, word: str) -> str:
    flat = " ".join(text.split())
    at = flat.lower().find(word)
    start = max(0, at - SNIPPET_CHARS)
    end = min(len(flat), at + len(word) + SNIPPET_CHARS)
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


class GuideLibrary:
    """The station's guides, read once from disk; HTML is rendered on first request and kept."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or guides_dir()
        self._lock = threading.Lock()
        self._guides: dict[str, Guide] | None = None
        self._html: dict[str, str] = {}
        self._renderer: MarkdownIt | None = None

    @property
    def _markdown(self) -> MarkdownIt:
        """The renderer, built on first use (two threads building it at once is harmless)."""
        renderer = self._renderer
        if renderer is None:
            renderer = self._renderer = _markdown(self)
        return renderer

    def _load(self) -> dict[str, Guide]:
        with self._lock:
            if self._guides is None:
                guides = {}
                for path in sorted(self.folder.glob("*.md")):
                    if GUIDE_NAME.match(path.stem):
                        guides[path.stem] = parse_guide(path.stem, path.read_text("utf-8"))
                self._guides = guides
            return self._guides

    def guides(self) -> list[Guide]:
        """Return every guide: the tasks in their order, then the others by title."""

        def order(guide: Guide) -> tuple[int, str]:
            rank = TASKS.index(guide.name) if guide.name in TASKS else len(TASKS)
            return rank, guide.title.lower()

        return sorted(self._load().values(), key=order)

    def moved(self, name: str) -> str | None:
        """Return the guide that replaced an old guide name, when there is one."""
        target = MOVED.get(name)
        return target if target is not None and target in self._load() else None

    def names(self) -> list[str]:
        """Return every guide's name, sorted."""
        return sorted(self._load())

    def get(self, name: str) -> Guide:
        """Return the guide called ``name``; raise NotFound for any other name."""
        guide = self._load().get(name) if GUIDE_NAME.match(name) else None
        if guide is None:
            raise NotFound(f"there is no guide called {name[:64]!r}")
        return guide

    def html(self, name: str) -> str:
        """Return the guide rendered to HTML (cached)."""
        guide = self.get(name)
        rendered = self._html.get(name)
        if rendered is None:
            rendered = self._markdown.render(guide.text)
            self._html[name] = rendered
        return rendered

    def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """Return the guides holding every word of ``query``, most mentions first."""
        words = query_words(query)
        if not words:
            return []
        hits = []
        for guide in self._load().values():
            haystack = guide.text.lower()
            counts = [haystack.count(word) for word in words]
            if all(counts):
                in_title = sum(word in guide.title.lower() for word in words)
                hits.append(
                    SearchHit(guide, sum(counts) + 10 * in_title, _snippet(guide.text, words[0]))
                )
        hits.sort(key=lambda hit: (-hit.score, hit.guide.name))
        return hits[:limit]

    def render(self, markdown: str) -> str:
        """Render other Markdown (a changelog excerpt) the way guides are rendered."""
        return self._markdown.render(markdown)

    def guide_href(self, reference: str) -> str | None:
        """Return ``/docs/<name>`` for a reference to an existing guide, else None."""
        match = _GUIDE_REFERENCE.match(reference)
        if match and match.group(1) in self._load():
            return f"/docs/{match.group(1)}{match.group(2) or ''}"
        return None

    def link_mentions(self, escaped: str) -> str:
        """Turn ``docs/<name>.md`` mentions in escaped text into links to existing guides."""

        def link(match: re.Match[str]) -> str:
            href = self.guide_href(match.group(0))
            return f'<a href="{href}">{match.group(0)}</a>' if href else match.group(0)

        return _MENTION.sub(link, escaped)


def _markdown(library: GuideLibrary) -> MarkdownIt:
    """Return a CommonMark renderer with tables, no raw HTML, and guide links rewritten."""
    md = markdown_it.MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

    def link_open(
        renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
    ) -> str:
        token = tokens[idx]
        href = library.guide_href(str(token.attrGet("href") or ""))
        if href:
            token.attrSet("href", href)
        env["in_link"] = env.get("in_link", 0) + 1
        return renderer.renderToken(tokens, idx, options, env)

    def link_close(
        renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
    ) -> str:
        env["in_link"] = env.get("in_link", 1) - 1
        return renderer.renderToken(tokens, idx, options, env)

    def text(
        renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
    ) -> str:
        escaped = html.escape(tokens[idx].content, quote=False)
        return escaped if env.get("in_link") else library.link_mentions(escaped)

    def code_inline(
        renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
    ) -> str:
        content = tokens[idx].content
        code = f"<code>{html.escape(content)}</code>"
        href = None if env.get("in_link") else library.guide_href(content)
        return f'<a href="{href}">{code}</a>' if href else code

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    md.add_render_rule("text", text)
    md.add_render_rule("code_inline", code_inline)
    return md
