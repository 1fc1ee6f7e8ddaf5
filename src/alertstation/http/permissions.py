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

# How a denial names a role and what a permission lets one do: a refused caller reads "Only an
# administrator can manage users", never a permission's catalog name.
ROLE_NOUNS: MappingProxyType[str, str] = MappingProxyType(
    {
        "admin": "an administrator",
        "operator": "an operator",
        "viewer": "a viewer",
        "demo": "a demo account",
    }
)
PERMISSION_ACTIONS: MappingProxyType[str, str] = MappingProxyType(
    {
        "system.configure": "change the station's settings",
        "system.manage_users": "manage users",
        "system.view_config": "see the station's configuration",
        "eas.broadcast": "send EAS messages",
        "receivers.configure": "change audio sources and radio receivers",
    }
)


# API token scopes: every permission of the catalog, plus ``read`` (every GET route that only
# needs sign-in) and ``admin`` (routes that require the admin role; only an admin may grant it).
READ_SCOPE = "read"
ADMIN_SCOPE = "admin"
TOKEN_SCOPES: tuple[str, ...] = (READ_SCOPE, *PERMISSIONS, ADMIN_SCOPE)


def role_permissions(role: str) -> frozenset[str]:
    """Return the permissions a role grants; an unknown role grants nothing."""
    return ROLES.get(role, frozenset())


def _either(nouns: list[str]) -> str:
    return nouns[0] if len(nouns) == 1 else ", ".join(nouns[:-1]) + " or " + nouns[-1]


def permission_denial(name: str) -> str:
    """Return why a caller without permission ``name`` is refused, in words.

    ``"Only an administrator can manage users."``; the roles named are those granting it.
    """
    holders = [ROLE_NOUNS[role] for role, granted in ROLES.items() if name in granted]
    action = PERMISSION_ACTIONS.get(name, "do this")
    if not holders:
        return f"No account can {action}."
    return f"Only {_either(holders)} can {action}."


def role_denial(role: str) -> str:
    """Return why a caller without role ``role`` is refused, in words."""
    return f"Only {ROLE_NOUNS.get(role, role)} can do this."


def read_only_denial(role: str) -> str:
    """Return why a read-only role is refused a change, in words."""
    noun = ROLE_NOUNS.get(role, f"a {role} account")
    changers = [ROLE_NOUNS[r] for r in ROLES if r not in READ_ONLY_ROLES]
    return f"{noun[0].upper()}{noun[1:]} can look but not change anything; ask {_either(changers)}."


def validate_role(role: str) -> str:
    """Return ``role`` when it is in the catalog, else raise ValueError listing the valid ones."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    return role
