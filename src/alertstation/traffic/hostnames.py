"""Reverse DNS of visitor addresses: a worker job every 10 minutes while ``resolve_hostnames``.

Each address without a host name is looked up once, with a timeout of 3.0 s for IPv6 and 1.5 s
for IPv4. A name found fills ``hostname`` on the address's rows; an address with no PTR record
is remembered (``traffic_hostnames.outcome = 'none'``) and not asked again; a transient failure
(timeout, resolver error) leaves no trace and the address is tried again next run. Masked
addresses (``anonymize_ip``) are never looked up.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, func, select

from alertstation.context import Station
from alertstation.db.engine import begin_write
from alertstation.traffic import addresses
from alertstation.traffic.address_rows import of_ip
from alertstation.traffic.settings import load_settings
from alertstation.traffic.tables import traffic_hostnames, web_request_logs

INTERVAL = 600.0
TIMEOUT_V4 = 1.5
TIMEOUT_V6 = 3.0
BATCH = 100
FOUND = "found"
NO_RECORD = "none"

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="traffic-rdns")


class TransientLookupError(Exception):
    """The lookup did not answer (timeout or resolver failure); try again later."""


Resolver = Callable[[str, float], "str | None"]


def system_resolver(ip: str, timeout: float) -> str | None:
    """Return the PTR name of ``ip``, None when it has none; TransientLookupError otherwise."""
    future = _pool.submit(socket.gethostbyaddr, ip)
    try:
        return future.result(timeout=timeout)[0][:255] or None
    except socket.herror:
        return None  # the address has no PTR record
    except (FutureTimeout, OSError) as ex:
        raise TransientLookupError(f"{ip}: {type(ex).__name__}") from None


@dataclass
class BackfillResult:
    """What one run did."""

    found: int = 0
    no_record: int = 0
    failed: int = 0


def timeout_for(ip: str) -> float:
    """Return the lookup timeout of an address: 3.0 s for IPv6, 1.5 s for IPv4."""
    return TIMEOUT_V6 if addresses.ip_version(ip) == 6 else TIMEOUT_V4


def pending(engine: Engine, limit: int = BATCH) -> list[tuple[str, float]]:
    """Return addresses with rows lacking a host name and no remembered answer, each with the
    time of the first such row (its rows are found from there: ``address_rows.of_ip``)."""
    known = select(traffic_hostnames.c.ip)
    t = web_request_logs
    query = (
        select(t.c.client_ip, func.min(t.c.ts))
        .where(t.c.hostname.is_(None), t.c.client_ip.not_in(known))
        .group_by(t.c.client_ip)
        .order_by(t.c.client_ip)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [(ip, float(first)) for ip, first in conn.execute(query)]


def backfill(engine: Engine, resolver: Resolver, now: datetime) -> BackfillResult:
    """Look up the pending addresses and store what was learned."""
    result = BackfillResult()
    for ip, first in pending(engine):
        try:
            masked = addresses.mask_address(ip)
        except ValueError:
            continue
        if masked == ip:
            continue  # a masked (anonymized) address names a network, not a host
        try:
            name = resolver(ip, timeout_for(ip))
        except TransientLookupError:
            result.failed += 1
            continue
        with begin_write(engine) as conn:
            conn.execute(
                traffic_hostnames.insert().values(
                    ip=ip, hostname=name, outcome=FOUND if name else NO_RECORD, checked_at=now
                )
            )
            if name:
                conn.execute(
                    web_request_logs.update()
                    .where(of_ip(ip, first), web_request_logs.c.hostname.is_(None))
                    .values(hostname=name)
                )
        if name:
            result.found += 1
        else:
            result.no_record += 1
    return result


def hostname_job(station: Station) -> None:
    """The worker's reverse-DNS job: runs only while ``resolve_hostnames`` is on."""
    with station.engine.connect() as conn:
        enabled = load_settings(conn).resolve_hostnames
    if enabled:
        backfill(station.engine, system_resolver, station.clock())
