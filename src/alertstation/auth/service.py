"""Account service functions, callable from the CLI, the web tier and tests alike."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, delete, func, insert, select, update

from alertstation.auth.passwords import hash_password, verify_password
from alertstation.auth.policy import load_policy
from alertstation.auth.tables import users
from alertstation.db.types import utcnow
from alertstation.errors import Conflict, FieldError, Invalid, NotFound, raise_field_errors
from alertstation.http.permissions import validate_role

USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$")


@functools.cache
def _dummy_hash() -> str:
    """Return a hash to verify against when the username is unknown (uniform sign-in timing)."""
    return hash_password("timing-equaliser-not-a-password")


@dataclass(frozen=True)
class User:
    """An account as the rest of the station sees it (never the password hash)."""

    id: int
    username: str
    role: str
    is_active: bool
    created_at: datetime
    last_login_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON form used by the API."""
        return {
            "id": self.id,
            "username": self.username,
            "role": self.role,
            "is_active": self.is_active,
            "created_at": self.created_at,
            "last_login_at": self.last_login_at,
        }


def _user(row: Row[Any]) -> User:
    return User(
        id=row.id,
        username=row.username,
        role=row.role,
        is_active=bool(row.is_active),
        created_at=row.created_at,
        last_login_at=row.last_login_at,
    )


def password_problem(conn: Connection, password: Any, username: str | None, field: str) -> str:
    """Return why ``password`` is refused for ``username``, worded for ``field``, or "" when
    it passes (so a form can report it beside its other errors)."""
    if not isinstance(password, str):
        return f"{field} must be a string"
    problem = load_policy(conn).problem(password, username) or ""
    if problem.startswith("password ") and field != "password":
        problem = field + problem[len("password") :]
    return problem


def _checked_password_hash(
    conn: Connection, password: str, username: str | None, *, field: str = "password"
) -> str:
    """Hash ``password`` after checking it against the station's password policy.

    A refusal is 422 naming ``field`` (the form's field: ``password``, ``new_password``).
    """
    problem = password_problem(conn, password, username, field)
    if problem:
        raise Invalid(problem, code="password_policy", field=field)
    try:
        return hash_password(password)
    except ValueError as ex:
        raise Invalid(str(ex), field=field) from ex


def _checked_role(role: str) -> str:
    try:
        return validate_role(role)
    except ValueError as ex:
        raise Invalid(str(ex), field="role") from ex


USERNAME_RULE = (
    "username must be 2-64 characters of letters, digits, '.', '_' or '-', "
    "starting with a letter or digit"
)


def create_user(conn: Connection, *, username: str, role: str, password: str) -> User:
    """Create an account; raise Invalid for a bad name, role or password, Conflict if taken.

    Every bad field is reported at once: ``details.errors`` lists ``{field, message}``.
    """
    errors: list[FieldError] = []
    if not isinstance(username, str) or not USERNAME_PATTERN.match(username):
        errors.append(FieldError("username", USERNAME_RULE))
    try:
        _checked_role(role)
    except Invalid as ex:
        errors.append(FieldError("role", ex.message))
    name = username if isinstance(username, str) else None
    problem = password_problem(conn, password, name, "password")
    if problem:
        errors.append(FieldError("password", problem))
    try:
        raise_field_errors(errors)
    except FieldError as ex:
        raise ex.as_app_error() from None
    password_hash = _checked_password_hash(conn, password, username)
    taken = conn.execute(
        select(users.c.id).where(func.lower(users.c.username) == username.lower())
    ).first()
    if taken:
        raise Conflict(
            f"username {username!r} is already taken", code="username_taken", field="username"
        )
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


def get_user(conn: Connection, user_id: int) -> User:
    """Return one account by id; raise NotFound."""
    row = conn.execute(select(users).where(users.c.id == user_id)).first()
    if row is None:
        raise NotFound(f"no user with id {user_id}")
    return _user(row)


def find_user(conn: Connection, username: str) -> User:
    """Return one account by name (case-insensitive); raise NotFound."""
    row = conn.execute(
        select(users).where(func.lower(users.c.username) == username.lower())
    ).first()
    if row is None:
        raise NotFound(f"no user named {username!r}")
    return _user(row)


def list_users(conn: Connection) -> list[User]:
    """Return every account ordered by name."""
    return [_user(row) for row in conn.execute(select(users).order_by(users.c.username))]


def authenticate(conn: Connection, username: str, password: str) -> User | None:
    """Return the enabled account whose password matches, else None (uniform timing)."""
    row = conn.execute(
        select(users).where(func.lower(users.c.username) == username.lower())
    ).first()
    if row is None:
        verify_password(_dummy_hash(), password)
        return None
    if not verify_password(row.password_hash, password) or not row.is_active:
        return None
    return _user(row)


def record_login(conn: Connection, user_id: int, when: datetime) -> None:
    """Remember when an account last signed in."""
    conn.execute(update(users).where(users.c.id == user_id).values(last_login_at=when))


def count_active_admins(conn: Connection) -> int:
    """Return how many enabled accounts hold the admin role."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(users)
            .where(users.c.role == "admin", users.c.is_active.is_(True))
        ).scalar_one()
    )


def _guard_last_admin(conn: Connection, user: User, *, role: str, is_active: bool) -> None:
    """Refuse a change that would leave the station with no enabled admin.

    The refusal names the field that would do it: ``role`` (a demotion), ``is_active``
    (disabling); deleting names none.
    """
    loses_admin = user.role == "admin" and user.is_active and (role != "admin" or not is_active)
    if loses_admin and count_active_admins(conn) <= 1:
        fields = {"field": "role" if role and role != "admin" else "is_active"} if role else {}
        raise Conflict(
            "the last enabled admin cannot be demoted, disabled or deleted",
            code="last_admin",
            **fields,
        )


def update_user(
    conn: Connection, user_id: int, *, role: str | None = None, is_active: bool | None = None
) -> tuple[User, list[str]]:
    """Change an account's role and/or enabled flag; return it and the names of changed fields."""
    user = get_user(conn, user_id)
    new_role = _checked_role(role) if role is not None else user.role
    new_active = user.is_active if is_active is None else bool(is_active)
    _guard_last_admin(conn, user, role=new_role, is_active=new_active)
    changes: dict[str, Any] = {}
    if new_role != user.role:
        changes["role"] = new_role
    if new_active != user.is_active:
        changes["is_active"] = new_active
    if changes:
        conn.execute(
            update(users).where(users.c.id == user_id).values(**changes, updated_at=utcnow())
        )
    return get_user(conn, user_id), sorted(changes)


def delete_user(conn: Connection, user_id: int) -> User:
    """Remove an account (its sessions go with it); refuse the last enabled admin."""
    user = get_user(conn, user_id)
    _guard_last_admin(conn, user, role="", is_active=False)
    conn.execute(delete(users).where(users.c.id == user_id))
    return user


def set_password(conn: Connection, user_id: int, password: str, *, field: str = "password") -> None:
    """Replace an account's password (checked against the password policy).

    A refused password is 422 naming ``field``, the form's name for it.
    """
    username = conn.execute(select(users.c.username).where(users.c.id == user_id)).scalar()
    if username is None:
        raise NotFound(f"no user with id {user_id}")
    password_hash = _checked_password_hash(conn, password, username, field=field)
    now = utcnow()
    result = conn.execute(
        update(users)
        .where(users.c.id == user_id)
        .values(password_hash=password_hash, password_changed_at=now, updated_at=now)
    )
    if result.rowcount == 0:
        raise NotFound(f"no user with id {user_id}")


def check_own_password(conn: Connection, user_id: int, password: str) -> bool:
    """Tell whether ``password`` is the account's current password."""
    row = conn.execute(select(users.c.password_hash).where(users.c.id == user_id)).first()
    return row is not None and verify_password(row.password_hash, password)


def change_own_password(
    conn: Connection, user_id: int, current_password: str, new_password: str
) -> None:
    """Change a password after checking the current one."""
    row = conn.execute(select(users.c.password_hash).where(users.c.id == user_id)).first()
    if row is None or not verify_password(row.password_hash, current_password):
        raise Invalid(
            "the current password is not correct", code="wrong_password", field="current_password"
        )
    if current_password == new_password:
        raise Invalid("the new password must differ from the current one", field="new_password")
    set_password(conn, user_id, new_password, field="new_password")
