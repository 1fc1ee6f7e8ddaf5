"""The permission catalog and the roles that grant permissions.

Every permission a route names must be in ``PERMISSIONS``; every role must be in ``ROLES``. The
app refuses to start otherwise (see ``alertstation.http.routing``).
"""

from __future__ import annotations

from types import MappingProxyType

PERMISSIONS: MappingProxyType[str, str] = MappingProxyType(
    {
        "system.configure": "Change station settings, zone catalog and operations",
        "system.manage_users": "Create, change and remove accounts; manage sessions and bans",
        "system.view_config": "Read station configuration and diagnostics",
        "eas.broadcast": "Generate, send, resend and purge EAS messages",
        "receivers.configure": "Create and change audio sources and radio receivers",
    }
)

_ALL = frozenset(PERMISSIONS)

ROLES: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        "admin": _ALL,
        "operator": _ALL - {"system.manage_users"},
        "viewer": frozenset({"system.view_config"}),
        "demo": frozenset(),
    }
)

# Roles that may never change state, whatever permissions they might later be given.
READ_ONLY_ROLES = frozenset({"viewer", "demo"})


def role_permissions(role: str) -> frozenset[str]:
    """Return the permissions a role grants; an unknown role grants nothing."""
    return ROLES.get(role, frozenset())


def validate_role(role: str) -> str:
    """Return ``role`` when it is in the catalog, else raise ValueError listing the valid ones."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    return role
