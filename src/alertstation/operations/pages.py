"""The operations pages' common GET: a template no cache may keep, rendered for the station."""

from __future__ import annotations

from typing import Any, ClassVar

import falcon

from alertstation.context import Station


class NoStorePage:
    """GET renders :attr:`template` with :meth:`context`, sent with ``Cache-Control: no-store``.

    The operations pages show settings, key state and the effective configuration: no browser or
    proxy cache may keep them.
    """

    template: ClassVar[str]

    def __init__(self, station: Station) -> None:
        self._station = station

    def context(self, req: falcon.Request) -> dict[str, Any]:
        """Return the template's variables (a subclass's own)."""
        raise NotImplementedError

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.set_header("Cache-Control", "no-store")
        self._station.templates.page(req, resp, self.template, **self.context(req))
