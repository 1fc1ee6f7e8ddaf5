"""Routes of auto-forward and the Required Weekly Test.

Reading the settings needs ``system.view_config``; changing them (the RWT schedule included)
needs ``system.configure``; airing a weekly test now needs ``eas.broadcast``.
"""

from alertstation.context import Station
from alertstation.eas.forward import resources as r
from alertstation.http.routing import Route, permission

_VIEW = permission("system.view_config")
_CONFIGURE = permission("system.configure")
_BROADCAST = permission("eas.broadcast")
_SETTINGS_BODY = 16 * 1024


def routes(station: Station) -> list[Route]:
    """Return the routes of auto-forward and the weekly test."""
    forward = r.ForwardSettingsResource(station)
    schedule = r.RwtScheduleResource(station)
    return [
        Route(
            "GET",
            "/eas/forward",
            r.ForwardPage(station),
            _VIEW,
            summary="Auto-forward and weekly test page",
        ),
        Route(
            "GET",
            "/admin/eas/forward",
            forward,
            _VIEW,
            summary="Auto-forward settings and the recent forward queue",
        ),
        Route(
            "PUT",
            "/admin/eas/forward",
            forward,
            _CONFIGURE,
            summary="Change the auto-forward settings; config.updated audit",
            max_body=_SETTINGS_BODY,
        ),
        Route(
            "GET",
            "/admin/eas/rwt",
            schedule,
            _VIEW,
            summary="Weekly test schedule with its next slot",
        ),
        Route(
            "PUT",
            "/admin/eas/rwt",
            schedule,
            _CONFIGURE,
            summary="Change the weekly test schedule; config.updated audit",
            max_body=_SETTINGS_BODY,
        ),
        Route(
            "POST",
            "/eas/rwt/test",
            r.RwtTestResource(station),
            _BROADCAST,
            summary="Air a Required Weekly Test now; eas.broadcast audit (non-blocking)",
            max_body=_SETTINGS_BODY,
        ),
    ]
