"""Request and response schemas of the host firewall bridge routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    ANY_OBJECT,
    ANYTHING,
    BOOL,
    STRING,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    obj,
)

SYNC = ANYTHING  # the sync report, or null when nothing was pushed

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/admin/hostban/status"): api(
        obj(service=ANY_OBJECT, mirror_enabled=BOOL, ssh_jail_enabled=BOOL, settings=ANY_OBJECT)
    ),
    ("POST", "/admin/hostban/configure"): api(
        obj(settings=ANY_OBJECT, changed=array(STRING), applied=BOOL, sync=SYNC),
        request=body(
            apply=BOOL,
            mirror_enabled=BOOL,
            ssh_jail_enabled=BOOL,
            ssh_ban_seconds={"type": "integer"},
        ),
    ),
    ("POST", "/admin/hostban/resync"): api(obj(sync=SYNC)),
    ("POST", "/admin/hostban/service"): api(
        obj(action=STRING, sync=SYNC), request=body(action=STRING)
    ),
    ("POST", "/admin/hostban/ssh-unban"): api(
        obj(ip=STRING, deactivated=ANYTHING), request=body(ip=STRING)
    ),
}
