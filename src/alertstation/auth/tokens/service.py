"""API tokens: long-lived credentials for automation clients (see ``docs/accounts.md``).

A token is 32 random bytes, URL-safe base64, shown once with the prefix ``ast_``. The station
keeps its HMAC-SHA256 keyed with the station secret (so a copy of the database alone cannot be
turned into working tokens, nor checked against guesses) and its first 8 characters to tell
tokens apart on the pages.

A token carries scopes: names from the permission catalog, plus ``read`` (every GET route that
only needs sign-in) and ``admin`` (routes that require the admin role). At each request its
rights are its scopes intersected with its owner's current rights; the route rule lives in
``alertstation.http.routing.Access.covered_by``. A disabled owner's tokens stop working; a
deleted owner's tokens are deleted with the account. Tokens can expire and be revoked; a
revoked token stays listed.

Last-used time and address are written at most once a minute, like the session heartbeat.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, insert, or_, select, update

from alertstation.auth.service import User
from alertstation.auth.tables import api_tokens, users
from alertstation.errors import FieldError, NameTaken, NotFound
from alertstation.http.permissions import (
    ADMIN_SCOPE,
    READ_SCOPE,
    TOKEN_SCOPES,
    role_permissions,
)

TOKEN_PREFIX = "ast_"
DISPLAY_CHARS = 8  # the stored, shown beginning of a token: ``ast_`` and 4 more characters
LAST_USED_EVERY = timedelta(seconds=60)
RATE_LIMIT = 600  # requests per token ...
RATE_WINDOW = 60.0  # ... within this many seconds (per web process)
MAX_ACTIVE_TOKENS = 50  # unrevoked tokens per account
NAME_MAX = 64
MAX_EXPIRY_DAYS = 3650
# 32 bytes in URL-safe base64 without padding are 43 characters.
_TOKEN_SHAPE = re.compile(r"^ast_[A-Za-z0-9_-]{43}$")
_NAME_SHAPE = re.compile(r"^[^\x00-\x1f\x7f]+$")

# Why a presented token was refused (``Lookup.failure``).
UNKNOWN = "unknown"
EXPIRED = "expired"
REVOKED = "revoked"
OWNER_DISABLED = "owner_disabled"


def new_token() -> str:
    """Return a fresh token: ``ast_`` and 32 random bytes in URL-safe base64."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(secret_key: str, token: str) -> str:
    """Return the stored form of a token: HMAC-SHA256 keyed with the station secret, in hex."""
    return hmac.new(secret_key.encode(), token.encode(), hashlib.sha256).hexdigest()


def bearer_token(header: str | None) -> str | None:
    """Return the token of an ``Authorization: Bearer ast_…`` header, None when malformed."""
    if not header or len(header) > 200:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not _TOKEN_SHAPE.match(value):
        return None
    return value


@dataclass(frozen=True)
class ApiToken:
    """One api_tokens row as the lists show it (never the token or its hash)."""

    id: int
    user_id: int
    username: str
    name: str
    prefix: str
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    last_used_ip: str | None

    def state(self, now: datetime) -> str:
        """Return ``active``, ``expired`` or ``revoked``."""
        if self.revoked_at is not None:
            return REVOKED
        if self.expires_at is not None and self.expires_at <= now:
            return EXPIRED
        return "active"

    def as_dict(self, now: datetime) -> dict[str, Any]:
        """Return the JSON form used by the API."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "username": self.username,
            "name": self.name,
            "prefix": self.prefix,
            "scopes": list(self.scopes),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
            "last_used_at": self.last_used_at,
            "last_used_ip": self.last_used_ip,
            "state": self.state(now),
        }


@dataclass(frozen=True)
class ActiveToken:
    """A token accepted for this request: its scopes and its owner."""

    id: int
    name: str
    scopes: frozenset[str]
    user: User

    @property
    def actor_name(self) -> str:
        """Return how audit rows name an action taken with this token."""
        return f"token {self.name} of {self.user.username}"


@dataclass(frozen=True)
class Lookup:
    """What look_up found: the token, or why there is none, and whether last-use is due."""

    token: ActiveToken | None
    failure: str | None = None
    last_used_due: bool = False


def grantable_scopes(role: str) -> tuple[str, ...]:
    """Return the scopes an account of ``role`` may put on a token, in catalog order."""
    rights = role_permissions(role)
    return tuple(
        scope
        for scope in TOKEN_SCOPES
        if scope == READ_SCOPE or scope in rights or (scope == ADMIN_SCOPE and role == "admin")
    )


def validate_scopes(scopes: object, role: str) -> tuple[str, ...]:
    """Return the scopes in catalog order; raise FieldError("scopes") naming what is wrong.

    Each must be a scope name; only an admin may grant ``admin``, and nobody a permission
    their own role lacks (the token could never use it).
    """
    if not isinstance(scopes, list | tuple) or not scopes:
        raise FieldError("scopes", "choose at least one scope")
    if not all(isinstance(scope, str) for scope in scopes):
        raise FieldError("scopes", "scopes must be names")
    unknown = sorted(set(scopes) - set(TOKEN_SCOPES))
    if unknown:
        raise FieldError(
            "scopes",
            f"unknown scope(s) {', '.join(unknown)}; choose from {', '.join(TOKEN_SCOPES)}",
        )
    if ADMIN_SCOPE in scopes and role != "admin":
        raise FieldError("scopes", "only an administrator may grant the admin scope")
    grantable = grantable_scopes(role)
    lacking = sorted(set(scopes) - set(grantable))
    if lacking:
        raise FieldError("scopes", f"your role cannot grant {', '.join(lacking)}")
    return tuple(scope for scope in TOKEN_SCOPES if scope in scopes)


def validate_name(name: object) -> str:
    """Return a token name, trimmed; raise FieldError("name") when empty, too long or odd."""
    if not isinstance(name, str) or not name.strip():
        raise FieldError("name", "give the token a name")
    name = name.strip()
    if len(name) > NAME_MAX:
        raise FieldError("name", f"a token name is at most {NAME_MAX} characters")
    if not _NAME_SHAPE.match(name):
        raise FieldError("name", "a token name may not hold control characters")
    return name


def validate_expiry(days: object, now: datetime) -> datetime | None:
    """Return the expiry of a token valid for ``days`` (None: no expiry)."""
    if days is None:
        return None
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_EXPIRY_DAYS:
        raise FieldError("expires_in_days", f"give a whole number of days, 1 to {MAX_EXPIRY_DAYS}")
    return now + timedelta(days=days)


def create_token(
    conn: Connection,
    owner: User,
    *,
    name: object,
    scopes: object,
    expires_in_days: object,
    now: datetime,
    secret_key: str,
) -> tuple[str, ApiToken]:
    """Create a token for ``owner``; return it (the only time it is seen) and its row.

    Raises FieldError naming the field (NameTaken when the owner has an unrevoked token of
    that name; ``name`` too when the owner already has ``MAX_ACTIVE_TOKENS``).
    """
    clean_name = validate_name(name)
    clean_scopes = validate_scopes(scopes, owner.role)
    expires_at = validate_expiry(expires_in_days, now)
    active = conn.execute(
        select(api_tokens.c.name).where(
            api_tokens.c.user_id == owner.id, api_tokens.c.revoked_at.is_(None)
        )
    ).scalars()
    names = {existing.lower() for existing in active}
    if clean_name.lower() in names:
        raise NameTaken("name", f"you already have a token named {clean_name!r}")
    if len(names) >= MAX_ACTIVE_TOKENS:
        raise FieldError("name", f"an account keeps at most {MAX_ACTIVE_TOKENS} tokens; revoke one")
    token = new_token()
    token_id = conn.execute(
        insert(api_tokens)
        .values(
            user_id=owner.id,
            name=clean_name,
            token_hash=token_digest(secret_key, token),
            prefix=token[:DISPLAY_CHARS],
            scopes=" ".join(clean_scopes),
            created_at=now,
            expires_at=expires_at,
        )
        .returning(api_tokens.c.id)
    ).scalar_one()
    return token, get_token(conn, token_id)


def _select():  # type: ignore[no-untyped-def]
    return select(api_tokens, users.c.username).join(users, users.c.id == api_tokens.c.user_id)


def _record(row: Any) -> ApiToken:
    return ApiToken(
        id=row.id,
        user_id=row.user_id,
        username=row.username,
        name=row.name,
        prefix=row.prefix,
        scopes=tuple(row.scopes.split()),
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        last_used_at=row.last_used_at,
        last_used_ip=row.last_used_ip,
    )


def get_token(conn: Connection, token_id: int) -> ApiToken:
    """Return one token's row; NotFound when there is none."""
    row = conn.execute(_select().where(api_tokens.c.id == token_id)).first()
    if row is None:
        raise NotFound(f"no API token with id {token_id}")
    return _record(row)


def list_tokens(
    conn: Connection, *, user_id: int | None = None, limit: int = 500
) -> list[ApiToken]:
    """Return tokens (of one account, or of all), unrevoked first, then newest first."""
    query = (
        _select()
        .order_by(api_tokens.c.revoked_at.is_not(None), api_tokens.c.id.desc())
        .limit(limit)
    )
    if user_id is not None:
        query = query.where(api_tokens.c.user_id == user_id)
    return [_record(row) for row in conn.execute(query)]


def revoke_token(
    conn: Connection, token_id: int, *, now: datetime, user_id: int | None = None
) -> ApiToken:
    """Revoke one unrevoked token (of ``user_id`` when given); NotFound when there is none."""
    conditions = [api_tokens.c.id == token_id, api_tokens.c.revoked_at.is_(None)]
    if user_id is not None:
        conditions.append(api_tokens.c.user_id == user_id)
    result = conn.execute(update(api_tokens).where(*conditions).values(revoked_at=now))
    if result.rowcount != 1:
        raise NotFound(f"no unrevoked API token with id {token_id}")
    return get_token(conn, token_id)


def look_up(conn: Connection, token: str, *, now: datetime, secret_key: str) -> Lookup:
    """Find the live token and its owner without writing; say why not, or that use is due."""
    row = conn.execute(
        select(
            api_tokens.c.id,
            api_tokens.c.name,
            api_tokens.c.scopes,
            api_tokens.c.expires_at,
            api_tokens.c.revoked_at,
            api_tokens.c.last_used_at,
            users.c.id.label("user_id"),
            users.c.username,
            users.c.role,
            users.c.is_active,
            users.c.created_at.label("user_created_at"),
            users.c.last_login_at,
        )
        .join(users, users.c.id == api_tokens.c.user_id)
        .where(api_tokens.c.token_hash == token_digest(secret_key, token))
    ).first()
    if row is None:
        return Lookup(token=None, failure=UNKNOWN)
    if row.revoked_at is not None:
        return Lookup(token=None, failure=REVOKED)
    if row.expires_at is not None and row.expires_at <= now:
        return Lookup(token=None, failure=EXPIRED)
    if not row.is_active:
        return Lookup(token=None, failure=OWNER_DISABLED)
    user = User(
        id=row.user_id,
        username=row.username,
        role=row.role,
        is_active=True,
        created_at=row.user_created_at,
        last_login_at=row.last_login_at,
    )
    active = ActiveToken(id=row.id, name=row.name, scopes=frozenset(row.scopes.split()), user=user)
    due = row.last_used_at is None or now - row.last_used_at >= LAST_USED_EVERY
    return Lookup(token=active, last_used_due=due)


def mark_used(conn: Connection, token_id: int, *, now: datetime, address: str) -> bool:
    """Write last-used time and address unless another request did within the last minute."""
    result = conn.execute(
        update(api_tokens)
        .where(
            api_tokens.c.id == token_id,
            or_(
                api_tokens.c.last_used_at.is_(None),
                api_tokens.c.last_used_at <= now - LAST_USED_EVERY,
            ),
        )
        .values(last_used_at=now, last_used_ip=address[:45])
    )
    return result.rowcount == 1
