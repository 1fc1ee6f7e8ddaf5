"""Seeded CAP messages shaped like the products NWS issues, for the ingest benchmarks.

NWS issues one product in segments, each its own CAP message with the product's ``sent`` and an
identifier ending ``.001.1``, ``.002.1``, ... (NWS Directive 10-1701). Each VTEC event (office,
phenomenon, significance, ETN) here runs over minutes or hours as a chain of products:

- a NEW product naming the first counties (or zones);
- updates whose segments name different subsets of the area: a CON segment for the counties
  that continue beside a CAN segment for those that end (a partial cancel), an EXA segment for
  new counties beside the CON for the rest, an EXT segment moving the end time;
- a watch upgraded to a warning for some zones (one segment with ``UPG WS.A`` and
  ``NEW WS.W``) while the watch continues (CON) in the others;
- a last product that cancels or lets the rest expire (EXP), sometimes before the event's end.

County-based phenomena (TO, SV, FF) name UGC county codes (``OKC027``) and the same counties as
SAME codes (``040027``); zone-based ones (WS, WW, WI, HT, FG) name UGC zones and the SAME
counties beside them. Events come from many offices in several states, start over a whole day,
and arrive out of order: segments of one product swapped, an update now and then before the
product it updates. Every update references the messages of the event's earlier products, as
api.weather.gov's documents do.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

CAP_NS = "urn:oasis:names:tc:emergency:cap:1.2"
SENDER = "w-nws.webmaster@noaa.gov"
#: The moment the store ingests at: late in the day the events start over.
NOW = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
DAY_START = NOW - timedelta(hours=20)

#: (office, state, SAME state number, first county number, zone base) for 16 offices.
OFFICES = [
    ("KOUN", "OK", 40, 1, 1), ("KTSA", "OK", 40, 101, 51),
    ("KFWD", "TX", 48, 1, 1), ("KEWX", "TX", 48, 201, 101),
    ("KLZK", "AR", 5, 1, 1), ("KSGF", "MO", 29, 1, 51),
    ("KILN", "OH", 39, 1, 1), ("KCLE", "OH", 39, 101, 51),
    ("KIND", "IN", 18, 1, 1), ("KLMK", "KY", 21, 1, 1),
    ("KJAN", "MS", 28, 1, 1), ("KBMX", "AL", 1, 1, 1),
    ("KFFC", "GA", 13, 1, 1), ("KPBZ", "PA", 42, 1, 1),
    ("KDTX", "MI", 26, 1, 1), ("KMPX", "MN", 27, 1, 1),
]  # fmt: skip
COUNTIES_PER_OFFICE = 24

#: phenomenon, significance, name, SAME event, county-based, duration (minutes).
PHENOMENA = [
    ("TO", "W", "Tornado Warning", "TOR", True, 45),
    ("SV", "W", "Severe Thunderstorm Warning", "SVR", True, 60),
    ("FF", "W", "Flash Flood Warning", "FFW", True, 180),
    ("TO", "A", "Tornado Watch", "TOA", True, 420),
    ("SV", "A", "Severe Thunderstorm Watch", "SVA", True, 360),
    ("WS", "A", "Winter Storm Watch", "WSA", False, 900),
    ("WW", "Y", "Winter Weather Advisory", "WWY", False, 600),
    ("WI", "Y", "Wind Advisory", "WIY", False, 480),
    ("HT", "Y", "Heat Advisory", "HTY", False, 540),
    ("FG", "Y", "Dense Fog Advisory", "FGY", False, 240),
]  # fmt: skip


@dataclass
class Segment:
    """One CAP message of a product: its VTEC strings and the counties it names."""

    vtec: list[str]
    counties: list[int]
    msg_type: str
    expires: datetime


@dataclass
class Product:
    """One issued product: its segments share ``sent``."""

    sent: datetime
    segments: list[Segment] = field(default_factory=list)


def office_counties(index: int) -> list[int]:
    """Return the county numbers (odd, as FIPS counties are) an office covers."""
    first = OFFICES[index][3]
    return [first + 2 * n for n in range(COUNTIES_PER_OFFICE)]


def station_area() -> list[str]:
    """Return the configured area: the SAME counties of three offices, one zone of a fourth."""
    codes = []
    for index in (0, 6, 13):
        _office, _state, fips, _first, _zone = OFFICES[index]
        codes += [f"0{fips:02d}{county:03d}" for county in office_counties(index)]
    return [*codes, "KYZ001", "KYZ003"]


def feed_states() -> list[str]:
    """Return the storage area: every state of the feed as a SAME whole-state code (``040000``)."""
    return sorted({f"0{fips:02d}000" for _office, _state, fips, _first, _zone in OFFICES})


def _vtec(action: str, office: str, ph: str, sig: str, etn: int, begin: str, end: datetime) -> str:
    return f"/O.{action}.{office}.{ph}.{sig}.{etn:04d}.{begin}-{end:%y%m%dT%H%MZ}/"


def _event(rng: random.Random, office: str, kind: tuple, etn: int, counties: list[int]) -> list:
    """Return the products of one event, in the order NWS issues them."""
    ph, sig, _name, _same, _county_based, minutes = kind
    start = DAY_START + timedelta(minutes=rng.randrange(0, 18 * 60))
    end = start + timedelta(minutes=minutes)
    area = rng.sample(counties, rng.randint(3, min(14, len(counties))))
    spare = [c for c in counties if c not in area]
    ongoing = "000000T0000Z"

    def v(action: str, until: datetime, begin: str = ongoing) -> str:
        return _vtec(action, office, ph, sig, etn, begin, until)

    products = [
        Product(start, [Segment([v("NEW", end, f"{start:%y%m%dT%H%MZ}")], area, "Alert", end)])
    ]
    live = list(area)
    step = max(minutes // 4, 10)
    sent = start
    for update in range(rng.randint(1, 4)):
        sent = sent + timedelta(minutes=rng.randint(step // 2, step))
        if sent >= end or len(live) < 2:
            break
        product = Product(sent)
        choice = rng.random()
        if choice < 0.35:  # a partial cancel beside a CON for the rest
            cut = rng.randint(1, len(live) - 1)
            gone, live = live[:cut], live[cut:]
            product.segments += [
                Segment([v("CAN", end)], gone, "Cancel", sent + timedelta(minutes=10)),
                Segment([v("CON", end)], live, "Update", end),
            ]
        elif choice < 0.6 and spare:  # new counties (EXA) beside the CON for the rest
            added = spare[: rng.randint(1, min(4, len(spare)))]
            spare = spare[len(added) :]
            product.segments += [
                Segment([v("EXA", end)], added, "Update", end),
                Segment([v("CON", end)], list(live), "Update", end),
            ]
            live += added
        elif choice < 0.75:  # the end moved later
            end = end + timedelta(minutes=rng.choice((30, 60, 120)))
            product.segments.append(Segment([v("EXT", end)], list(live), "Update", end))
        elif ph == "WS" and update == 0:  # upgraded to a warning for some zones
            cut = rng.randint(1, len(live) - 1)
            upgraded, live = live[:cut], live[cut:]
            warning = _vtec("NEW", office, "WS", "W", etn + 500, ongoing, end)
            product.segments += [
                Segment([v("UPG", end), warning], upgraded, "Update", end),
                Segment([v("CON", end)], live, "Update", end),
            ]
        else:  # a plain continuation, in two segments (one per forecast area)
            half = len(live) // 2
            product.segments += [
                Segment([v("CON", end)], live[:half], "Update", end),
                Segment([v("CON", end)], live[half:], "Update", end),
            ]
        products.append(product)
    last = min(end, sent + timedelta(minutes=rng.randint(step // 2, step)))
    if rng.random() < 0.5:  # the rest cancelled or, at the end, expired
        action = "EXP" if last >= end - timedelta(minutes=1) else "CAN"
        product = Product(
            last, [Segment([v(action, end)], live, "Cancel", last + timedelta(minutes=10))]
        )
        products.append(product)
    return products


def _identifier(office: str, etn: int, ph: str, number: int, segment: int) -> str:
    digest = hashlib.sha1(f"{office}.{ph}.{etn}.{number}".encode()).hexdigest()
    return f"urn:oid:2.49.0.1.840.0.{digest}.{segment:03d}.1"


def _message(
    identifier: str, sent: datetime, office: str, kind: tuple, segment: Segment,
    references: list[tuple[str, datetime]],
) -> bytes:  # fmt: skip
    ph, _sig, name, same_event, county_based, _minutes = kind
    index = next(i for i, o in enumerate(OFFICES) if o[0] == office)
    _office, state, fips, _first, zone_base = OFFICES[index]
    if county_based:
        ugc = [f"{state}C{c:03d}" for c in segment.counties]
    else:
        ugc = [f"{state}Z{zone_base + c // 2:03d}" for c in segment.counties]
    same = [f"0{fips:02d}{c:03d}" for c in segment.counties]
    geocodes = "".join(
        f"<geocode><valueName>{kind_}</valueName><value>{code}</value></geocode>"
        for kind_, codes in (("SAME", same), ("UGC", ugc))
        for code in codes
    )
    refs = " ".join(f"{SENDER},{ident},{when.isoformat()}" for ident, when in references)
    refs_xml = f"<references>{refs}</references>" if refs else ""
    vtec = "".join(
        f"<parameter><valueName>VTEC</valueName><value>{v}</value></parameter>"
        for v in segment.vtec
    )
    area = "; ".join(ugc)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="{CAP_NS}"><identifier>{identifier}</identifier>
<sender>{SENDER}</sender><sent>{sent.isoformat()}</sent><status>Actual</status>
<msgType>{segment.msg_type}</msgType><scope>Public</scope>{refs_xml}<info><category>Met</category>
<event>{name}</event><urgency>Immediate</urgency><severity>Severe</severity>
<certainty>Observed</certainty><eventCode><valueName>SAME</valueName><value>{same_event}</value>
</eventCode><eventCode><valueName>NationalWeatherService</valueName><value>{ph}W</value></eventCode>
<effective>{sent.isoformat()}</effective><expires>{segment.expires.isoformat()}</expires>
<senderName>NWS {office}</senderName><headline>{name} issued by NWS {office}</headline>
<description>{name} for {area}.</description>
<parameter><valueName>AWIPSidentifier</valueName><value>WWA{office[1:]}</value></parameter>
{vtec}<area><areaDesc>{area}</areaDesc>{geocodes}</area></info></alert>
""".encode()


def make_products(count: int, seed: int) -> list[bytes]:
    """Return ``count`` CAP messages of whole multi-segment products, in arrival order."""
    rng = random.Random(seed)
    etns: dict[tuple[str, str, str], int] = {}
    messages: list[tuple[datetime, int, bytes]] = []
    order = 0
    while len(messages) < count:
        index = rng.randrange(len(OFFICES))
        office = OFFICES[index][0]
        kind = rng.choice(PHENOMENA)
        etn = etns[(office, kind[0], kind[1])] = etns.get((office, kind[0], kind[1]), 0) + 1
        references: list[tuple[str, datetime]] = []
        for number, product in enumerate(_event(rng, office, kind, etn, office_counties(index))):
            sent_refs = []
            for position, segment in enumerate(product.segments, start=1):
                identifier = _identifier(office, etn, kind[0] + kind[1], number, position)
                body = _message(identifier, product.sent, office, kind, segment, references)
                if product.sent <= NOW:  # issued by the moment the store ingests at
                    messages.append((product.sent, order, body))
                sent_refs.append((identifier, product.sent))
                order += 1
            references = references + sent_refs
    messages.sort(key=lambda item: (item[0], item[1]))
    arrived = [body for _sent, _order, body in messages[:count]]
    for position in range(len(arrived) - 1):  # out of order: segments swapped, updates early
        if rng.random() < 0.2:
            other = min(len(arrived) - 1, position + rng.randint(1, 6))
            arrived[position], arrived[other] = arrived[other], arrived[position]
    return arrived
