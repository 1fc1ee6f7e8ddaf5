"""Administrator sessions: one admin_sessions row per sign-in.

The cookie carries a random token and an HMAC of it under the station's secret key, so a forged
or altered cookie is refused before the database is asked. The table keeps only the token's
SHA-256. The CSRF token is derived from the session token with the same key, so it needs no
storage and changes with every sign-in.

State table (spec "Administrator session"): a request refreshes last_seen_at at most once per
60 seconds and, when it does, sweeps idle rows; sign-out and Terminate end a row; a row idle
for longer than the session lifetime is ended with reason ``expired``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from alertstation.auth.service import User
from alertstation.auth.tables import admin_sessions, users

HEARTBEAT = timedelta(seconds=60)
COOKIE_NAME = "alertstation_session"

ENDED_LOGOUT = "logout"
ENDED_TERMINATED = "terminated"
ENDED_EXPIRED = "expired"
ENDED_PASSWORD_CHANGED = "password_changed"
ENDED_USER_DISABLED = "user_disabled"


def _sign(secret_key: str, purpose: str, token: str) -> str:
    digest = hmac.new(secret_key.encode(), f"{purpose}:{token}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    """Return the stored form of a session token."""
    return hashlib.sha256(token.encode()).hexdigest()


def cookie_value(secret_key: str, token: str) -> str:
    """Return the signed cookie value for a session token."""
    return f"{token}.{_sign(secret_key, 'session', token)}"


def token_from_cookie(secret_key: str, value: str | None) -> str | None:
    """Return the token of a correctly signed cookie value, else None."""
    if not value or value.count(".") != 1 or len(value) > 200:
        return None
    token, signature = value.split(".")
    if not token or not hmac.compare_digest(signature, _sign(secret_key, "session", token)):
        return None
    return token


def csrf_token(secret_key: str, token: str) -> str:
    """Return the CSRF token that belongs to a session token."""
    return _sign(secret_key, "csrf", token)


@dataclass(frozen=True)
class ActiveSession:
    """A resolved, live session and its user."""

    id: int
    user: User
    csrf_token: str


@dataclass(frozen=True)
class SessionRecord:
    """One admin_sessions row for the sessions list."""

    id: int
    user_id: int
    username: str
    role: str
    source_ip: str
    user_agent: str | None
    created_at: datetime
    last_seen_at: datetime
    ended_at: datetime | None
    ended_reason: str | None

    def as_dict(self, current_id: int | None = None) -> dict[str, Any]:
        """Return the JSON form used by the API."""
        return {
            "id": self.id,
            "user_id": self.user_id,
            "username": self.username,
            "role": self.role,
            "source_ip": self.source_ip,
            "user_agent": self.user_agent,
            "created_at": self.created_at,
            "last_seen_at": self.last_seen_at,
            "ended_at": self.ended_at,
            "ended_reason": self.ended_reason,
            "active": self.ended_at is None,
            "current": self.id == current_id,
        }


def start_session(
    conn: Connection,
    user: User,
    *,
    source_ip: str,
    user_agent: str | None,
    now: datetime,
    secret_key: str,
) -> tuple[str, ActiveSession]:
    """Create a session row; return the cookie value and the live session."""
    token = secrets.token_urlsafe(32)
    session_id = conn.execute(
        insert(admin_sessions)
        .values(
            token_hash=token_hash(token),
            user_id=user.id,
            source_ip=source_ip,
            user_agent=(user_agent or "")[:512] or None,
            created_at=now,
            last_seen_at=now,
        )
        .returning(admin_sessions.c.id)
    ).scalar_one()
    session = ActiveSession(id=session_id, user=user, csrf_token=csrf_token(secret_key, token))
    return cookie_value(secret_key, token), session


@dataclass(frozen=True)
class Lookup:
    """What resolve_session found: the session, or why there is none, and writes to make."""

    session: ActiveSession | None
    end_reason: str | None = None
    session_id: int | None = None
    heartbeat_due: bool = False


def look_up_session(
    conn: Connection, token: str, *, now: datetime, lifetime: timedelta, secret_key: str
) -> Lookup:
    """Find the live session for a token without writing; say what must be written."""
    row = conn.execute(
        select(
            admin_sessions.c.id,
            admin_sessions.c.created_at,
            admin_sessions.c.last_seen_at,
            admin_sessions.c.ended_at,
            users.c.id.label("user_id"),
            users.c.username,
            users.c.role,
            users.c.is_active,
            users.c.created_at.label("user_created_at"),
            users.c.last_login_at,
        )
        .join(users, users.c.id == admin_sessions.c.user_id)
        .where(admin_sessions.c.token_hash == token_hash(token))
    ).first()
    if row is None or row.ended_at is not None:
        return Lookup(session=None)
    if not row.is_active:
        return Lookup(session=None, end_reason=ENDED_USER_DISABLED, session_id=row.id)
    if now - row.last_seen_at > lifetime or now - row.created_at > lifetime:
        return Lookup(session=None, end_reason=ENDED_EXPIRED, session_id=row.id)
    user = User(
        id=row.user_id,
        username=row.username,
        role=row.role,
        is_active=True,
        created_at=row.user_created_at,
        last_login_at=row.last_login_at,
    )
    session = ActiveSession(id=row.id, user=user, csrf_token=csrf_token(secret_key, token))
    return Lookup(
        session=session, session_id=row.id, heartbeat_due=now - row.last_seen_at >= HEARTBEAT
    )


def has_open_session_from(
    conn: Connection, address: str, *, now: datetime, lifetime: timedelta
) -> bool:
    """Tell whether a live session (of an enabled account) was started from ``address``."""
    cutoff = now - lifetime
    query = (
        select(admin_sessions.c.id)
        .join(users, users.c.id == admin_sessions.c.user_id)
        .where(
            admin_sessions.c.source_ip == address,
            admin_sessions.c.ended_at.is_(None),
            admin_sessions.c.last_seen_at >= cutoff,
            admin_sessions.c.created_at >= cutoff,
            users.c.is_active.is_(True),
        )
        .limit(1)
    )
    return conn.execute(query).first() is not None


def heartbeat(conn: Connection, session_id: int, *, now: datetime) -> bool:
    """Refresh last_seen_at unless another request did so within the last 60 seconds."""
    result = conn.execute(
        update(admin_sessions)
        .where(
            admin_sessions.c.id == session_id,
            admin_sessions.c.ended_at.is_(None),
            admin_sessions.c.last_seen_at <= now - HEARTBEAT,
        )
        .values(last_seen_at=now)
    )
    return result.rowcount == 1


def sweep_idle_sessions(conn: Connection, *, now: datetime, lifetime: timedelta) -> int:
    """End every open session idle (or older) than the lifetime; return how many."""
    cutoff = now - lifetime
    result = conn.execute(
        update(admin_sessions)
        .where(
            admin_sessions.c.ended_at.is_(None),
            or_(admin_sessions.c.last_seen_at < cutoff, admin_sessions.c.created_at < cutoff),
        )
        .values(ended_at=now, ended_reason=ENDED_EXPIRED)
    )
    return result.rowcount


def end_session(conn: Connection, session_id: int, *, reason: str, now: datetime) -> bool:
    """End one open session; return False when it was already ended or does not exist."""
    result = conn.execute(
        update(admin_sessions)
        .where(admin_sessions.c.id == session_id, admin_sessions.c.ended_at.is_(None))
        .values(ended_at=now, ended_reason=reason)
    )
    return result.rowcount == 1


def end_sessions(
    conn: Connection,
    *,
    reason: str,
    now: datetime,
    user_id: int | None = None,
    keep_session_id: int | None = None,
) -> int:
    """End open sessions (of one user, or of everyone), except one to keep; return how many."""
    conditions = [admin_sessions.c.ended_at.is_(None)]
    if user_id is not None:
        conditions.append(admin_sessions.c.user_id == user_id)
    if keep_session_id is not None:
        conditions.append(admin_sessions.c.id != keep_session_id)
    result = conn.execute(
        update(admin_sessions).where(and_(*conditions)).values(ended_at=now, ended_reason=reason)
    )
    return result.rowcount


def list_sessions(
    conn: Connection, *, include_ended: bool = False, limit: int = 500
) -> list[SessionRecord]:
    """Return sessions, open ones first then newest first."""
    query = (
        select(
            admin_sessions,
            users.c.username,
            users.c.role,
        )
        .join(users, users.c.id == admin_sessions.c.user_id)
        .order_by(admin_sessions.c.ended_at.is_not(None), admin_sessions.c.last_seen_at.desc())
        .limit(limit)
    )
    if not include_ended:
        query = query.where(admin_sessions.c.ended_at.is_(None))
    return [
        SessionRecord(
            id=row.id,
            user_id=row.user_id,
            username=row.username,
            role=row.role,
            source_ip=row.source_ip,
            user_agent=row.user_agent,
            created_at=row.created_at,
            last_seen_at=row.last_seen_at,
            ended_at=row.ended_at,
            ended_reason=row.ended_reason,
        )
        for row in conn.execute(query)
    ]
