"""Seed a station database for the HTTP benchmark: ban list, alert settings and stored alerts.

Everything is seeded (no clock-dependent randomness) and written with SQLAlchemy Core bulk
inserts in one transaction, so 10,000 alerts take about a second.
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from alertstation.alerts import lifecycle
from alertstation.alerts.matching import encode_code
from alertstation.alerts.service import set_alert_settings
from alertstation.alerts.store import GENERATION as ALERTS_GENERATION
from alertstation.alerts.tables import cap_alert_geocodes, cap_alerts
from alertstation.db import make_engine
from alertstation.db.engine import begin_write
from alertstation.db.generations import bump_generation
from alertstation.db.migrate import upgrade_to_head
from alertstation.security.autoban.settings import FLOOD, MAX_THRESHOLD, save_settings
from alertstation.security.bans.tables import BANS_GENERATION, ip_filters

SEED = 20261124
BANS = 3_000
ALERTS = 10_000
ACTIVE = 400  # active alerts at once: about what a national feed carries
IN_AREA = 3  # of them, in the station's area
# The station's area: 40 county SAME codes in two states (Oklahoma and Texas).
ZONE_CODES = tuple(f"0{state:02d}{county:03d}" for state in (40, 48) for county in range(1, 41, 2))
STORAGE_ZONE_CODES = ("040000", "048000")  # whole states: everything in them is stored
FORWARD_EVENTS = ("TOR", "SVR", "FFW", "EAN")
# Counties the stored alerts name; the station's own ones only for the in-area alerts.
OTHER_COUNTIES = tuple(
    f"0{state:02d}{county:03d}" for state in (40, 48) for county in range(101, 400, 2)
)
EVENTS = (
    ("SVR", "Severe Thunderstorm Warning"),
    ("TOR", "Tornado Warning"),
    ("FFW", "Flash Flood Warning"),
    ("WSW", "Winter Storm Warning"),
    ("SPS", "Special Weather Statement"),
)
CLIENT = "192.0.2.200"  # TEST-NET-1: the address wrk's requests name; never among the bans


@dataclass(frozen=True)
class Seeded:
    """What was written: the database URL, the active alerts and the in-area ones."""

    database_url: str
    active: int
    in_area: int
    banned_address: str  # an address inside the first ban entry


def seed_station(data_dir: Path, now: datetime) -> Seeded:
    """Create, migrate and fill ``data_dir/alertstation.db`` (the station's default database)."""
    url = f"sqlite:///{data_dir / 'alertstation.db'}"
    engine = make_engine(url)
    try:
        upgrade_to_head(engine)
        first_ban = fill(engine, now)
    finally:
        engine.dispose()
    return Seeded(url, ACTIVE, IN_AREA, str(ipaddress.ip_network(first_ban).network_address))


def fill(engine: Engine, now: datetime) -> str:
    """Write the ban list, the settings and the alerts in one transaction; return a ban entry."""
    rng = random.Random(SEED)
    entries = ban_entries(rng, BANS)
    with begin_write(engine) as conn:
        rows = [
            {"value": value, "kind": "blocklist", "active": True, "created_at": now}
            | {"source": "manual"}
            for value in entries
        ]
        conn.execute(ip_filters.insert(), rows)
        bump_generation(conn, BANS_GENERATION)
        # The flood detector stays on and counts every request; its threshold is the maximum,
        # which no run reaches (bench_security_bantable.py does the same). The client is not
        # exempted: it is a routable address, sent by a trusted proxy as X-Forwarded-For.
        save_settings(conn, {"detectors": {FLOOD: {"threshold": MAX_THRESHOLD}}}, now)
        set_alert_settings(
            conn,
            zone_codes=ZONE_CODES,
            storage_zone_codes=STORAGE_ZONE_CODES,
            forward_events=FORWARD_EVENTS,
        )
        alerts, geocodes = alert_rows(rng, now)
        conn.execute(cap_alerts.insert(), alerts)
        conn.execute(cap_alert_geocodes.insert(), geocodes)
        bump_generation(conn, ALERTS_GENERATION)
    return entries[0]


def ban_entries(rng: random.Random, count: int) -> list[str]:
    """Return distinct IPv4/IPv6 addresses and ranges (a third are ranges), none in 192/8."""
    seen: set[Any] = set()
    while len(seen) < count:
        if rng.random() < 0.7:
            number = rng.getrandbits(32)
            if number >> 24 in (0, 10, 127, 192) or number >> 28 >= 14:
                continue  # keep private, loopback, multicast and 192/8 (the client) out
            length = 32 if rng.random() < 0.67 else rng.randint(16, 30)
            network: Any = ipaddress.IPv4Network(f"{ipaddress.IPv4Address(number)}/{length}", False)
        else:
            number = (1 << 125) | rng.getrandbits(125)  # 2000::/3
            length = 128 if rng.random() < 0.67 else rng.randint(32, 64)
            network = ipaddress.IPv6Network(f"{ipaddress.IPv6Address(number)}/{length}", False)
        seen.add(network)
    return sorted(
        str(n.network_address) if n.prefixlen == n.max_prefixlen else str(n) for n in seen
    )


def alert_rows(rng: random.Random, now: datetime) -> tuple[list[dict], list[dict]]:
    """Return the ``cap_alerts`` rows and their geocode rows, ids 1..ALERTS, oldest first.

    The newest ``ACTIVE`` alerts are active (expiring within a day), ``IN_AREA`` of them name
    the station's counties; the older ones ended (expired, cancelled or superseded).
    """
    alerts: list[dict] = []
    geocodes: list[dict] = []
    ended = (lifecycle.EXPIRED, lifecycle.EXPIRED, lifecycle.CANCELLED, lifecycle.SUPERSEDED)
    for number in range(1, ALERTS + 1):
        age = ALERTS - number  # minutes before now; the newest alert has the highest id
        sent = now - timedelta(minutes=age, seconds=rng.randrange(60))
        active = age < ACTIVE
        in_area = active and age < IN_AREA
        code, event = rng.choice(EVENTS)
        counties = rng.sample(OTHER_COUNTIES, 3)
        if in_area:
            counties[0] = ZONE_CODES[age]
        state = lifecycle.ACTIVE if active else rng.choice(ended)
        expires = now + timedelta(hours=rng.randint(1, 24)) if active else sent + timedelta(hours=1)
        alerts.append(
            {
                "id": number,
                "sender": "w-nws.webmaster@noaa.gov",
                "identifier": f"urn:oid:2.49.0.1.840.0.bench.{SEED}.{number}",
                "sent": sent,
                "source": "poll",
                "status": "Actual",
                "msg_type": "Alert",
                "event": event,
                "event_code": code,
                "severity": "Severe",
                "urgency": "Immediate",
                "certainty": "Observed",
                "headline": f"{event} issued {sent:%B %d at %H:%M} UTC by NWS",
                "area_desc": "; ".join(f"County {c}" for c in counties),
                "effective": sent,
                "onset": sent,
                "expires": expires,
                "ends": expires,
                "state": state,
                "cancelled_at": sent + timedelta(minutes=30) if state == "cancelled" else None,
                "in_area": in_area,
                "stored_area": True,
                "explicit": False,
                "raw": "<alert/>",
                "received_at": sent,
                "updated_at": sent,
            }
        )
        geocodes += [{"alert_id": number, "code_id": encode_code(c)} for c in set(counties)]
    return alerts, geocodes


def utc_now() -> datetime:
    """Return the seeding time (the real clock: the station serves against it)."""
    return datetime.now(UTC)
