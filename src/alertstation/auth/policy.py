"""The password policy that account creation and password changes enforce.

It lives in the single row of ``password_policy``; with no row the defaults apply (at least
:data:`DEFAULT_MIN_LENGTH` characters, and a password that contains the account's user name is
refused). The operations settings page changes it through :func:`save_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy import Connection, select

from alertstation.auth.passwords import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from alertstation.auth.tables import password_policy

POLICY_ID: Final[int] = 1
DEFAULT_MIN_LENGTH: Final[int] = MIN_PASSWORD_LENGTH
#: The policy may raise the minimum, never lower it below the hashing module's floor.
LOWEST_MIN_LENGTH: Final[int] = MIN_PASSWORD_LENGTH
HIGHEST_MIN_LENGTH: Final[int] = 128
#: User names shorter than this are not looked for inside passwords (too many false refusals).
SHORTEST_NAME_CHECKED: Final[int] = 3


@dataclass(frozen=True)
class PasswordPolicy:
    """What a new password must satisfy."""

    min_length: int = DEFAULT_MIN_LENGTH
    refuse_username: bool = True

    def problem(self, password: str, username: str | None) -> str | None:
        """Return why ``password`` breaks the policy for ``username``, or None when it passes."""
        if len(password) < self.min_length:
            return f"password must be at least {self.min_length} characters"
        if len(password) > MAX_PASSWORD_LENGTH:
            return f"password must be at most {MAX_PASSWORD_LENGTH} characters"
        if (
            self.refuse_username
            and username
            and len(username) >= SHORTEST_NAME_CHECKED
            and username.lower() in password.lower()
        ):
            return "password must not contain the user name"
        return None


def load_policy(conn: Connection) -> PasswordPolicy:
    """Return the stored policy, or the defaults when none was saved."""
    row = conn.execute(select(password_policy).where(password_policy.c.id == POLICY_ID)).first()
    if row is None:
        return PasswordPolicy()
    return PasswordPolicy(min_length=row.min_length, refuse_username=bool(row.refuse_username))


def check_min_length(value: int) -> int:
    """Return ``value`` when it is an allowed minimum length; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("password_min_length must be a whole number")
    if not LOWEST_MIN_LENGTH <= value <= HIGHEST_MIN_LENGTH:
        raise ValueError(
            f"password_min_length must be from {LOWEST_MIN_LENGTH} to {HIGHEST_MIN_LENGTH}"
        )
    return value


def save_policy(conn: Connection, policy: PasswordPolicy, now: datetime) -> list[str]:
    """Store ``policy`` in the caller's transaction; return the names of the fields changed."""
    check_min_length(policy.min_length)
    current = load_policy(conn)
    changed = [
        name
        for name, old, new in (
            ("password_min_length", current.min_length, policy.min_length),
            ("password_refuse_username", current.refuse_username, policy.refuse_username),
        )
        if old != new
    ]
    values = {
        "min_length": policy.min_length,
        "refuse_username": policy.refuse_username,
        "updated_at": now,
    }
    done = conn.execute(
        password_policy.update().where(password_policy.c.id == POLICY_ID).values(values)
    )
    if done.rowcount == 0:
        conn.execute(password_policy.insert().values(id=POLICY_ID, **values))
    return changed
