"""Jinja2 page rendering with the static-file cache-buster helper."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import falcon
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from alertstation.http.permissions import role_permissions
from alertstation.version import __version__


def web_dir() -> Path:
    """Return the folder holding ``templates/`` and ``static/`` (shipped inside the package)."""
    return Path(str(files("alertstation.web")))


# Navigation of the base layout: (label, path, permission needed or None for everyone, group).
# Rows of one group become one menu, placed where the group's first row is; a row without a
# group (or a three-field row) is a link of its own. The groups keep the bar on one line at
# 1280 px, so add new pages to a group rather than as links of their own.
NAVIGATION: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("Overview", "/", None, None),
    ("Alerts", "/alerts", None, None),
    ("Send a message", "/eas/manual", "eas.broadcast", "EAS"),
    ("Received messages", "/eas/received", "system.view_config", "EAS"),
    ("Approval queue", "/eas/pending", "system.view_config", "EAS"),
    ("Forwarding", "/eas/forward", "system.view_config", "EAS"),
    ("Zones", "/admin/zones", "system.view_config", "Station"),
    ("Alert settings", "/admin/location_settings", "system.view_config", "Station"),
    ("Boundary", "/admin/boundary", "system.configure", "Station"),
    ("Audio sources", "/audio", "receivers.configure", "Station"),
    ("Audio alerts", "/audio/alerts", "system.view_config", "Station"),
    ("Settings", "/admin/settings", "system.view_config", "Station"),
    ("Environment", "/admin/environment", "system.view_config", "Station"),
    ("Logs", "/logs", "system.view_config", "Station"),
    ("Status", "/status", None, None),
    ("Security", "/security/center", None, None),
    ("Users", "/admin/users", "system.manage_users", "Admin"),
    ("Sessions", "/admin/sessions", "system.manage_users", "Admin"),
    ("Backup", "/admin/operations/backup", "system.configure", "Admin"),
    ("Database upkeep", "/admin/optimize_db", "system.configure", "Admin"),
    ("Upgrade", "/admin/operations/upgrade", "system.configure", "Admin"),
    ("Docs", "/docs", None, None),
)


def navigation_menu(permissions: frozenset[str], path: str) -> list[dict[str, Any]]:
    """Return the navigation a caller may see: links and groups, each marked when current.

    A link is ``{"label", "href", "current"}``; a group is ``{"label", "links", "current"}``
    with its links in ``links``. A group with no link the caller may open is left out.
    """
    menu: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for row in NAVIGATION:
        label, href, needs = row[0], row[1], row[2]
        group = row[3] if len(row) > 3 else None
        if needs and needs not in permissions:
            continue
        link = {"label": label, "href": href, "current": path == href}
        if group is None:
            menu.append(link)
            continue
        if group not in groups:
            groups[group] = {"label": group, "links": [], "current": False}
            menu.append(groups[group])
        groups[group]["links"].append(link)
        groups[group]["current"] = groups[group]["current"] or link["current"]
    return menu


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
        self.env.globals.update(
            static_url=self.static_url,
            version=version,
            navigation=NAVIGATION,
            navigation_menu=navigation_menu,
        )

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

    def page(
        self, req: falcon.Request, resp: falcon.Response, template: str, **context: Any
    ) -> None:
        """Render a page into an HTML response with the request, user and CSRF token in scope."""
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self.render(template, **page_context(req), **context)


def page_context(req: falcon.Request) -> dict[str, Any]:
    """Return what every page needs: the request, the user, their permissions, the CSRF token."""
    user = getattr(req.context, "user", None)
    session = getattr(req.context, "session", None)
    return {
        "req": req,
        "user": user,
        "permissions": role_permissions(user.role) if user else frozenset(),
        "csrf_token": session.csrf_token if session else "",
    }
