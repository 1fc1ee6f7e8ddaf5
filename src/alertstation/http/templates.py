"""Jinja2 page rendering with the static-file cache-buster helper."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import falcon
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from alertstation.version import __version__


def web_dir() -> Path:
    """Return the folder holding ``templates/`` and ``static/`` (shipped inside the package)."""
    return Path(str(files("alertstation.web")))


# Navigation shown by the base layout: (label, path). Later pages add their entries here.
NAVIGATION: tuple[tuple[str, str], ...] = (
    ("Overview", "/"),
    ("Docs", "/docs"),
)


class Templates:
    """Render pages from ``web/templates`` with the helpers every page may use."""

    def __init__(self, root: Path | None = None, version: str = __version__) -> None:
        root = root or web_dir()
        self.static_dir = root / "static"
        self.version = version
        self.env = Environment(
            loader=FileSystemLoader(root / "templates"),
            autoescape=select_autoescape(["html", "xml"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals.update(static_url=self.static_url, version=version, navigation=NAVIGATION)

    def static_url(self, name: str) -> str:
        """Return ``/static/<name>?v=<version>``; raise ValueError for a file that is not there."""
        relative = name.lstrip("/")
        target = (self.static_dir / relative).resolve()
        if not target.is_relative_to(self.static_dir.resolve()) or not target.is_file():
            raise ValueError(f"static file {name!r} does not exist under web/static")
        return f"/static/{relative}?v={self.version}"

    def render(self, template: str, **context: Any) -> str:
        """Render a template to a string."""
        return self.env.get_template(template).render(**context)

    def respond(self, resp: falcon.Response, template: str, **context: Any) -> None:
        """Render a template into an HTML response."""
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self.render(template, **context)
