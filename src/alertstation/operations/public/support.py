"""``/support`` (how to report a problem; the diagnostics bundle) and ``/repo-stats``."""

from __future__ import annotations

import os

import falcon

from alertstation.context import Station
from alertstation.db.migrate import current_revision, head_revision
from alertstation.operations.public.diagnostics import diagnostics_json
from alertstation.operations.public.errorlog import recent_errors
from alertstation.operations.public.guides import GuideLibrary
from alertstation.operations.public.repo_stats import (
    changelog_excerpt,
    changelog_path,
    kernel_builds,
)
from alertstation.version import __version__


class SupportPage:
    """GET /support: what to include in a problem report, and the bundle link for admins."""

    def __init__(self, station: Station) -> None:
        self._templates = station.templates

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        user = getattr(req.context, "user", None)
        self._templates.page(
            req, resp, "support.html", is_admin=bool(user and user.role == "admin")
        )


class DiagnosticsBundle:
    """GET /support/diagnostics: the scrubbed diagnostics bundle as a JSON download."""

    def __init__(self, station: Station) -> None:
        self._station = station
        recent_errors()  # start keeping errors from now on

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        stamp = self._station.clock().strftime("%Y%m%dT%H%M%SZ")
        resp.data = diagnostics_json(self._station, os.environ)
        resp.content_type = falcon.MEDIA_JSON
        resp.downloadable_as = f"alertstation-diagnostics-{stamp}.json"
        resp.set_header("Cache-Control", "no-store")


class RepoStatsPage:
    """GET /repo-stats: version, changelog excerpt, schema revision and the kernels' build."""

    def __init__(self, station: Station, library: GuideLibrary) -> None:
        self._station = station
        self._library = library

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        engine = self._station.engine
        path = changelog_path()
        excerpt = changelog_excerpt(path.read_text("utf-8"), __version__) if path else ""
        self._station.templates.page(
            req,
            resp,
            "repo_stats.html",
            running=__version__,
            schema_revision=current_revision(engine),
            head_revision=head_revision(engine),
            changelog=self._library.render(excerpt) if excerpt else "",
            kernels=kernel_builds(),
            guide_count=len(self._library.names()),
        )
