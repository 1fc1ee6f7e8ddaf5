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
  run ``VERIFY_CONCURRENCY`` at a time per process on threads of lowered CPU priority (nice
  ``VERIFY_NICE``); at most ``VERIFY_QUEUE`` more wait, each at most ``VERIFY_MAX_WAIT``
  seconds, and the rest are answered 429 at once. So a flood of sign-ins from many addresses
  holds at most two of a web process's threads, and public reads and signed-in requests never
  wait behind it.
- ``global_sign_in_flood``: more than ``GLOBAL_FAILED_SIGN_INS`` failed sign-ins from all
  addresses within ``GLOBAL_FAILED_WINDOW`` (counted in the database, so across processes)
  close sign-in to every address but loopback and allowlisted ones until the rate falls.

Clocks are injected: every function takes ``now`` (the station's clock).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ParamSpec, TypeVar

from sqlalchemy import Connection, and_, func, select, update

from alertstation.auth.tables import admin_sessions, users
from alertstation.db.types import as_utc
from alertstation.security.autoban.service import LOGIN_FAILURE
from alertstation.security.autoban.tables import security_events
from alertstation.security.bans.service import is_allowlisted, is_loopback

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

VERIFY_NICE = 10  # CPU priority of the password-check threads (higher is lower)
VERIFY_CONCURRENCY = 1  # password checks running at once per web process ...
VERIFY_QUEUE = 1  # ... and waiting for a turn; beyond these, sign-in answers 429 at once
VERIFY_MAX_WAIT = 3.0  # seconds a check waits for a turn before 429
GLOBAL_FAILED_SIGN_INS = 60  # failed sign-ins from all addresses ...
GLOBAL_FAILED_WINDOW = timedelta(minutes=1)  # ... within this window refuse non-allowlisted

ENDED_SESSION_CAP = "session_cap"
ENDED_PASSWORD_GUESSING = "password_guessing"


class SignInRateLimit:
    """Attempts per key (a sign-in's address) in a sliding window, in memory, in bounded space.

    Loopback addresses are exempt unless ``exempt_loopback`` is false (the API token limit
    counts per token, wherever the requests come from).
    """

    def __init__(
        self,
        limit: int = SIGN_IN_RATE_LIMIT,
        window: float = SIGN_IN_RATE_WINDOW,
        *,
        capacity: int = SIGN_IN_TRACKED_ADDRESSES,
        exempt_loopback: bool = True,
    ) -> None:
        if limit < 1 or window <= 0 or capacity < 1:
            raise ValueError("limit and capacity must be at least 1 and window positive")
        self.limit = limit
        self.window = float(window)
        self._capacity = capacity
        self._exempt_loopback = exempt_loopback
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def attempt(self, address: str, now: datetime) -> int:
        """Count one attempt; return 0 when allowed, else the seconds to wait (Retry-After)."""
        if self._exempt_loopback and is_loopback(address):
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


class VerifierBusy(Exception):
    """Every password-check slot of this process is taken; try again in ``retry_after`` s."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"password checks are busy; retry after {retry_after} s")
        self.retry_after = retry_after


class Verifier:
    """Run password checks on low-priority threads of this process, with bounded concurrency.

    At most ``concurrency`` checks run at once; at most ``queue`` more wait for a turn, each for
    at most ``max_wait`` seconds. A check beyond those, or one whose wait runs out, raises
    ``VerifierBusy`` at once, so sign-ins never hold more than ``concurrency + queue`` of the
    web process's threads and the other threads stay free for every other request. The threads
    are started on first use (so after gunicorn forks its workers).
    """

    def __init__(
        self,
        nice: int = VERIFY_NICE,
        *,
        concurrency: int = VERIFY_CONCURRENCY,
        queue: int = VERIFY_QUEUE,
        max_wait: float = VERIFY_MAX_WAIT,
    ) -> None:
        if concurrency < 1 or queue < 0 or max_wait <= 0:
            raise ValueError("concurrency must be at least 1, queue at least 0, max_wait positive")
        self._nice = nice
        self.concurrency = concurrency
        self.max_wait = float(max_wait)
        self.retry_after = max(1, math.ceil(self.max_wait))
        self._slots = threading.BoundedSemaphore(concurrency + queue)
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._taken = 0
        self._lock = threading.Lock()

    def run(self, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Call ``func`` on a verification thread and return its result (or raise).

        Raises ``VerifierBusy`` when no slot is free or the wait for a turn runs out.
        """
        if not self._slots.acquire(blocking=False):
            raise VerifierBusy(self.retry_after)
        with self._lock:
            self._taken += 1
        try:
            future = self._pool().submit(func, *args, **kwargs)
            try:
                return future.result(timeout=self.max_wait)
            except FutureTimeout:
                if future.cancel():  # still waiting for a turn: give the turn up
                    raise VerifierBusy(self.retry_after) from None
                return future.result()  # already running: one check, let it finish
        finally:
            with self._lock:
                self._taken -= 1
            self._slots.release()

    def slots_taken(self) -> int:
        """Return how many checks run or wait right now."""
        return self._taken

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(
                    max_workers=self.concurrency,
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


def global_sign_in_flood(
    conn: Connection,
    address: str,
    now: datetime,
    *,
    limit: int = GLOBAL_FAILED_SIGN_INS,
    window: timedelta = GLOBAL_FAILED_WINDOW,
) -> int:
    """Return the seconds to wait when sign-in is closed to ``address`` by a global flood, else 0.

    Failed sign-ins from all addresses are counted within the window; at ``limit`` or more,
    every address but loopback and those an enforced allowlist entry covers is refused.
    """
    if is_loopback(address):
        return 0
    since = as_utc(now - window)
    recent = (
        select(security_events.c.occurred_at)
        .where(
            security_events.c.kind == LOGIN_FAILURE,
            security_events.c.occurred_at > since,
        )
        .order_by(security_events.c.occurred_at.desc())
        .limit(limit)
    )
    times = [as_utc(moment) for moment in conn.execute(recent).scalars()]
    if len(times) < limit or is_allowlisted(conn, address, now):
        return 0
    reopen = times[-1] + window  # type: ignore[operator]
    return max(1, math.ceil((reopen - as_utc(now)).total_seconds()))  # type: ignore[operator]


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
