"""Limits on guessing and on sign-in floods (see ``docs/accounts.md``, "Sign-in limits").

- ``SignInRateLimit``: sign-in attempts per client address within a sliding window, counted in
  memory before anything else is done, so a flood answered 429 costs no database query and no
  argon2 verification. Each web process counts on its own (with W processes an address gets at
  most W times the limit). Loopback is exempt, as at the ban gate.
- ``account_lock``: when one account collected ``ACCOUNT_LOCK_FAILURES`` failed sign-ins (from
  any addresses) within ``ACCOUNT_LOCK_WINDOW``, sign-ins to it are refused before the password
  is checked, except from an address the account signed in from successfully within
  ``KNOWN_ADDRESS_DAYS``. So guessing from many addresses stops, and the owner at a usual
  address is never locked out by someone else's guesses.
- ``cap_sessions``: an account keeps at most ``SESSION_CAP`` open sessions; a new sign-in ends
  the oldest ones.
- ``password_check_failures``: failed current-password checks of ``POST /account/password``;
  the session is ended at ``PASSWORD_CHECK_LIMIT``.
- ``VERIFIER``: password checks (argon2id, which takes several cores for tens of milliseconds)
  run one at a time per process on a thread of lowered CPU priority (nice ``VERIFY_NICE``), so
  a flood of sign-ins from many addresses queues behind itself instead of starving the public
  reads every page polls.

Clocks are injected: every function takes ``now`` (the station's clock).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ParamSpec, TypeVar

from sqlalchemy import Connection, and_, func, select, update

from alertstation.auth.tables import admin_sessions, users
from alertstation.db.types import as_utc
from alertstation.security.autoban.service import LOGIN_FAILURE
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.service import is_loopback

SIGN_IN_RATE_LIMIT = 10  # attempts per address ...
SIGN_IN_RATE_WINDOW = 60.0  # ... within this many seconds
SIGN_IN_TRACKED_ADDRESSES = 10_000
SESSION_CAP = 10  # open sessions per account
PASSWORD_CHECK_LIMIT = 5  # failed current-password checks before the session is ended
PASSWORD_CHECK_WINDOW = timedelta(minutes=15)
ACCOUNT_LOCK_FAILURES = 10  # failed sign-ins to one account ...
ACCOUNT_LOCK_WINDOW = timedelta(minutes=15)  # ... within this window lock it for new addresses
KNOWN_ADDRESS_DAYS = 30
PASSWORD_PATH = "/account/password"

VERIFY_NICE = 10  # CPU priority of the password-check thread (higher is lower)

ENDED_SESSION_CAP = "session_cap"
ENDED_PASSWORD_GUESSING = "password_guessing"


class SignInRateLimit:
    """Sign-in attempts per address in a sliding window, in memory, in bounded space."""

    def __init__(
        self,
        limit: int = SIGN_IN_RATE_LIMIT,
        window: float = SIGN_IN_RATE_WINDOW,
        *,
        capacity: int = SIGN_IN_TRACKED_ADDRESSES,
    ) -> None:
        if limit < 1 or window <= 0 or capacity < 1:
            raise ValueError("limit and capacity must be at least 1 and window positive")
        self.limit = limit
        self.window = float(window)
        self._capacity = capacity
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def attempt(self, address: str, now: datetime) -> int:
        """Count one attempt; return 0 when allowed, else the seconds to wait (Retry-After)."""
        if is_loopback(address):
            return 0
        moment = now.timestamp()
        with self._lock:
            times = self._seen.get(address)
            if times is None:
                if len(self._seen) >= self._capacity:
                    self._seen.popitem(last=False)
                times = self._seen[address] = deque(maxlen=self.limit)
            else:
                self._seen.move_to_end(address)
            while times and times[0] <= moment - self.window:
                times.popleft()
            if len(times) >= self.limit:
                return max(1, math.ceil(times[0] + self.window - moment))
            times.append(moment)
            return 0


P = ParamSpec("P")
T = TypeVar("T")


def _lower_priority(nice: int) -> None:
    """Lower this thread's CPU priority (Linux applies nice per thread); best effort."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass


class Verifier:
    """Run password checks one at a time on one low-priority thread of this process.

    The thread is started on first use (so after gunicorn forks its workers).
    """

    def __init__(self, nice: int = VERIFY_NICE) -> None:
        self._nice = nice
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def run(self, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Call ``func`` on the verification thread and return its result (or raise)."""
        return self._pool().submit(func, *args, **kwargs).result()

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(
                    max_workers=1,
                    thread_name_prefix="password-check",
                    initializer=_lower_priority,
                    initargs=(self._nice,),
                )
                self._pid = os.getpid()
            return self._executor


VERIFIER = Verifier()


@dataclass(frozen=True)
class AccountLock:
    """An account locked for addresses it does not know, and for how much longer."""

    failures: int
    retry_after: int


def _failures_query(username: str, since: datetime, path: str | None = None):  # type: ignore[no-untyped-def]
    conditions = [
        security_events.c.kind == LOGIN_FAILURE,
        security_events.c.occurred_at > as_utc(since),
        func.lower(security_events.c.detail) == username.lower(),
    ]
    if path is not None:
        conditions.append(security_events.c.path == path)
    return and_(*conditions)


def is_known_address(conn: Connection, username: str, address: str, now: datetime) -> bool:
    """Tell whether the account signed in successfully from ``address`` within the known days."""
    since = as_utc(now - timedelta(days=KNOWN_ADDRESS_DAYS))
    query = (
        select(admin_sessions.c.id)
        .join(users, users.c.id == admin_sessions.c.user_id)
        .where(
            func.lower(users.c.username) == username.lower(),
            admin_sessions.c.source_ip == address,
            admin_sessions.c.created_at > since,
        )
        .limit(1)
    )
    return conn.execute(query).first() is not None


def account_lock(
    conn: Connection,
    username: str,
    address: str,
    now: datetime,
    *,
    failures: int = ACCOUNT_LOCK_FAILURES,
    window: timedelta = ACCOUNT_LOCK_WINDOW,
) -> AccountLock | None:
    """Return the lock that refuses this attempt, or None when it may go ahead.

    Failures are counted per username as typed (case-insensitive), whether or not the account
    exists, so the answer says nothing about which accounts exist. Loopback and addresses the
    account knows are never refused.
    """
    if not username or is_loopback(address):
        return None
    since = now - window
    recent = (
        select(security_events.c.occurred_at)
        .where(_failures_query(username, since))
        .order_by(security_events.c.occurred_at.desc())
        .limit(failures)
    )
    times = [as_utc(moment) for moment in conn.execute(recent).scalars()]
    if len(times) < failures or is_known_address(conn, username, address, now):
        return None
    unlock = times[-1] + window  # type: ignore[operator]
    return AccountLock(len(times), max(1, math.ceil((unlock - as_utc(now)).total_seconds())))  # type: ignore[operator]


def password_check_failures(
    conn: Connection, username: str, now: datetime, window: timedelta = PASSWORD_CHECK_WINDOW
) -> int:
    """Return the failed current-password checks of an account within the window."""
    query = select(func.count()).where(_failures_query(username, now - window, PASSWORD_PATH))
    return int(conn.execute(query).scalar_one())


def cap_sessions(
    conn: Connection, user_id: int, now: datetime, cap: int = SESSION_CAP
) -> list[int]:
    """End the oldest open sessions of an account beyond ``cap``; return their ids."""
    open_ids = list(
        conn.execute(
            select(admin_sessions.c.id)
            .where(admin_sessions.c.user_id == user_id, admin_sessions.c.ended_at.is_(None))
            .order_by(admin_sessions.c.created_at.desc(), admin_sessions.c.id.desc())
        ).scalars()
    )
    extra = open_ids[cap:]
    if extra:
        conn.execute(
            update(admin_sessions)
            .where(admin_sessions.c.id.in_(extra), admin_sessions.c.ended_at.is_(None))
            .values(ended_at=now, ended_reason=ENDED_SESSION_CAP)
        )
    return extra
