"""Jinja2 page rendering with the static-file cache-buster helper."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from functools import cached_property
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alertstation import lazy
from alertstation.http.permissions import role_permissions
from alertstation.version import __version__

if TYPE_CHECKING:
    import falcon
    from jinja2 import Environment
    from jinja2.runtime import Context

# The worker builds a Station (and so a Templates) but seldom renders a page: Jinja2 and
# Falcon load with the first page, not with the process.
falcon_module = lazy.module("falcon")
jinja2 = lazy.module("jinja2")


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
    ("Station log", "/eas/log", "system.view_config", "EAS"),
    ("Zones", "/admin/zones", "system.view_config", "Station"),
    ("Alert settings", "/admin/location_settings", "system.view_config", "Station"),
    ("Alert feeds", "/admin/poller", "system.view_config", "Station"),
    ("Boundary", "/admin/boundary", "system.configure", "Station"),
    ("Audio sources", "/audio", "receivers.configure", "Station"),
    ("Receiver programs", "/admin/receiver_allowlist", "system.view_config", "Station"),
    ("Audio alerts", "/audio/alerts", "system.view_config", "Station"),
    ("Notifications", "/notifications", "system.view_config", "Station"),
    ("Settings", "/admin/settings", "system.view_config", "Station"),
    ("Environment", "/admin/environment", "system.view_config", "Station"),
    ("Logs", "/logs", "system.view_config", "Station"),
    ("Status", "/status", None, None),
    ("Security", "/security/center", None, None),
    ("Users", "/admin/users", "system.manage_users", "Admin"),
    ("Sessions", "/admin/sessions", "system.manage_users", "Admin"),
    ("API tokens", "/admin/tokens", "system.manage_users", "Admin"),
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


def local_time(moment: datetime | str | None, zone: tzinfo = UTC) -> str:
    """Return a moment as pages show it: station time, with UTC beside it.

    ``2026-11-28 22:21 EST (03:21 UTC)``; the UTC date is named too when it differs
    (``(2026-11-29 03:21 UTC)``), and a station on UTC reads ``2026-11-29 03:21 UTC``. A naive
    datetime or ISO text without an offset is taken as UTC; None or "" reads "".
    """
    if moment is None or moment == "":
        return ""
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    local = moment.astimezone(zone)
    label = local.tzname() or "UTC"
    label = f"UTC{label}" if label[:1] in "+-" else label
    if local.utcoffset() == utc.utcoffset() and label == "UTC":
        return f"{utc:%Y-%m-%d %H:%M} UTC"
    beside = f"{utc:%H:%M}" if utc.date() == local.date() else f"{utc:%Y-%m-%d %H:%M}"
    return f"{local:%Y-%m-%d %H:%M} {label} ({beside} UTC)"


def _local_time_filter(context: Context, moment: datetime | str | None) -> str:
    return local_time(moment, context.get("station_time_zone") or UTC)


#: ``(header text, a moment near its issue time, station time zone) -> plain text or None``.
PlainTextSource = Callable[[str, datetime | None, tzinfo], str | None]


def _as_moment(value: datetime | str | None) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value if isinstance(value, datetime) else None


class Templates:
    """Render pages from ``web/templates`` with the helpers every page may use.

    ``{{ moment | local_time }}`` shows a time in the station's time zone with UTC beside it
    (the one place pages format times); ``page`` reads the zone once per page from
    ``time_zone_source``, which the station sets (UTC without one).
    ``{{ header | plain_text(moment) }}`` is a SAME header's plain-language text, issued near
    ``moment`` ("" for text that is no valid header), through ``plain_text_source``, which the
    station sets to :mod:`alertstation.eas.plain` (layers below eas cannot name it).
    """

    def __init__(self, root: Path | None = None, version: str = __version__) -> None:
        root = root or web_dir()
        self.static_dir = root / "static"
        self.version = version
        self.templates_dir = root / "templates"
        self.time_zone_source: Callable[[], tzinfo] | None = None
        self.plain_text_source: PlainTextSource | None = None

    @cached_property
    def env(self) -> Environment:
        """The Jinja2 environment, built on first use."""
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(self.templates_dir),
            autoescape=jinja2.select_autoescape(["html", "xml"]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["local_time"] = jinja2.pass_context(_local_time_filter)
        env.filters["plain_text"] = jinja2.pass_context(
            lambda context, header, near=None: self._plain_text(context, header, near)
        )
        env.globals.update(
            static_url=self.static_url,
            version=self.version,
            navigation=NAVIGATION,
            navigation_menu=navigation_menu,
        )
        return env

    def _plain_text(
        self, context: Context, header: str | None, near: datetime | str | None = None
    ) -> str:
        if not header or self.plain_text_source is None:
            return ""
        zone = context.get("station_time_zone") or UTC
        return self.plain_text_source(header, _as_moment(near), zone) or ""

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
        resp.content_type = falcon_module.MEDIA_HTML
        zone = self.time_zone_source() if self.time_zone_source is not None else UTC
        context.setdefault("station_time_zone", zone)
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
