"""Routes of auto-forward and the Required Weekly Test.

Reading the settings needs ``system.view_config``; changing them (the RWT schedule included)
needs ``system.configure``; airing a weekly test now needs ``eas.broadcast``. The forwarding
rules read with ``system.view_config`` and change with ``system.configure``; the approval
queue reads with ``system.view_config``, and forwarding, holding or rejecting an item needs
``eas.broadcast``.
"""

from alertstation.context import Station
from alertstation.eas.forward import resources as r
from alertstation.http.routing import Route, permission

_VIEW = permission("system.view_config")
_CONFIGURE = permission("system.configure")
_BROADCAST = permission("eas.broadcast")
_SETTINGS_BODY = 16 * 1024
_RULES_BODY = 256 * 1024


def routes(station: Station) -> list[Route]:
    """Return the routes of auto-forward and the weekly test."""
    forward = r.ForwardSettingsResource(station)
    schedule = r.RwtScheduleResource(station)
    rules = r.ForwardRulesResource(station)
    act = r.PendingAction(station)
    approval = [
        Route("GET", "/api/eas/forward/rules", rules, _VIEW, summary="Forwarding rules"),
        Route(
            "PUT",
            "/api/eas/forward/rules",
            rules,
            _CONFIGURE,
            summary="Replace the forwarding rules; config.updated audit",
            max_body=_RULES_BODY,
        ),
        Route("GET", "/eas/pending", r.PendingPage(station), _VIEW, summary="Approval queue"),
        Route(
            "GET", "/api/eas/pending", r.PendingCollection(station), _VIEW, summary="Approval queue"
        ),
    ] + [
        Route(
            "POST",
            f"/api/eas/pending/{{item_id:int}}/{action}",
            act,
            _BROADCAST,
            suffix=action,
            summary=f"{action.capitalize()} a message on the approval queue; audited",
        )
        for action in ("forward", "hold", "reject")
    ]
    return approval + [
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
