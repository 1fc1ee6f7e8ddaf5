"""Account service functions, callable from the CLI, the web tier and tests alike."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, insert, select

from alertstation.auth.passwords import hash_password
from alertstation.auth.permissions import validate_role
from alertstation.auth.tables import users
from alertstation.db.types import utcnow
from alertstation.errors import Conflict, Invalid

USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$")


@dataclass(frozen=True)
class User:
    """An account as the rest of the station sees it (never the password hash)."""

    id: int
    username: str
    role: str
    is_active: bool
    created_at: datetime


def create_user(conn: Connection, *, username: str, role: str, password: str) -> User:
    """Create an account; raise Invalid for a bad name, role or password, Conflict if taken."""
    if not USERNAME_PATTERN.match(username):
        raise Invalid(
            "username must be 2-64 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    try:
        validate_role(role)
        password_hash = hash_password(password)
    except ValueError as ex:
        raise Invalid(str(ex)) from ex
    taken = conn.execute(
        select(users.c.id).where(func.lower(users.c.username) == username.lower())
    ).first()
    if taken:
        raise Conflict(f"username {username!r} is already taken")
    now = utcnow()
    user_id = conn.execute(
        insert(users)
        .values(
            username=username,
            role=role,
            password_hash=password_hash,
            is_active=True,
            created_at=now,
            updated_at=now,
            password_changed_at=now,
        )
        .returning(users.c.id)
    ).scalar_one()
    return User(id=user_id, username=username, role=role, is_active=True, created_at=now)


def count_active_admins(conn: Connection) -> int:
    """Return how many enabled accounts hold the admin role."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(users)
            .where(users.c.role == "admin", users.c.is_active.is_(True))
        ).scalar_one()
    )
