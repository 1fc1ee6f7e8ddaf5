"""Time alert geocode matching against a plain Python ``set.isdisjoint`` loop over the same alerts.

The peer gets the rule's wildcards for free: its set holds every alert code that matches a
configured code (expanded once, in Python, like our bit table), so each alert costs one
``isdisjoint`` call. Outputs of ours and the peer are compared before anything is timed. With
``--benchmark-disable`` (as in CI) the data is smaller so the file stays quick.

``alerts.match_many.scattered`` times the same alerts with every code a new ``str`` created in
shuffled order, so the codes of one alert lie far apart in memory, as strings kept from many
parses do; the peer runs on the same scattered copy.

``alerts.match_many.station`` and ``alerts.match_encoded.station``: a station-sized area, 59
configured codes in two states (Ohio and Pennsylvania: SAME counties, UGC zones, the whole-state
wildcard 039000 and two county parts) against a national feed of 5,000 alerts spread evenly over
the states and DC, each with 1..12 counties as SAME codes and as many UGC zones, as NWS CAP
alerts carry both. About 3 % of them match (2.6 % of the 1,000 that CI uses). The peer's
expanded set is small here (about 12,000 codes), where the main workload's 5,000 configured
codes make it huge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from alertstation.alerts.matching import (
    FIPS_STATE,
    STATE_FIPS,
    GeocodeMatcher,
    encode_geocode_lists,
)

PEER = "python set loop"
SEED = 20261121
FULL_SIZE = (100_000, 5_000)  # alerts, configured codes
SMALL_SIZE = (2_000, 500)
MAX_CODES = 30
MARINE_PREFIXES = ("AM", "AN", "GM", "LE", "LH", "LM", "LO", "LS", "PH", "PK", "PZ")


@dataclass(frozen=True)
class Workload:
    """Seeded alerts, the configured codes, and both sides' prepared matchers."""

    alerts: list[list[str]]
    scattered: list[list[str]]
    flat: np.ndarray
    offsets: np.ndarray
    matcher: GeocodeMatcher
    wanted: frozenset[str]


def code_universe() -> list[str]:
    """Return about 245,000 codes: SAME counties, parts and states; UGC zones and counties."""
    codes = ["000000"]
    for fips in sorted(STATE_FIPS.values()):
        codes.append(f"0{fips:02d}000")
        codes.extend(
            f"{part}{fips:02d}{county:03d}" for part in range(10) for county in range(1, 200)
        )
    for prefix in sorted(STATE_FIPS) + list(MARINE_PREFIXES):
        codes.extend(f"{prefix}{kind}{number:03d}" for kind in "ZC" for number in range(1, 1000))
    return codes


def expand_for_python(configured: list[str]) -> frozenset[str]:
    """Return every alert code that matches one of the configured codes, by the rule on strings.

    The configured codes never hold 000000 here (it would make the set everything).
    """
    wanted: set[str] = set()
    for code in configured:
        wanted.update((code, "000000"))
        if not code.isdigit():
            fips = STATE_FIPS.get(code[:2])
            if fips is not None:
                wanted.add(f"0{fips:02d}000")
                if code[2] == "C" and code[3:] != "000":  # a UGC county is its SAME county
                    wanted.update(f"{p}{fips:02d}{code[3:]}" for p in range(10))
            continue
        part, state, county = code[0], code[1:3], code[3:]
        if state != "00":
            wanted.add(f"0{state}000")
        if part == "0" and county == "000" and state != "00":
            wanted.update(f"{p}{state}{n:03d}" for p in range(10) for n in range(1000))
            postal = FIPS_STATE.get(int(state))
            if postal is not None:
                wanted.update(f"{postal}{kind}{n:03d}" for kind in "ZC" for n in range(1000))
        else:
            if part == "0":
                wanted.update(f"{p}{state}{county}" for p in range(1, 10))
            else:
                wanted.add(f"0{state}{county}")
            postal = FIPS_STATE.get(int(state))
            if postal is not None and county != "000":
                wanted.add(f"{postal}C{county}")  # the UGC county of a SAME county or part
    return frozenset(wanted)


def python_set_loop(wanted: frozenset[str], alerts: list[list[str]]) -> list[bool]:
    """Return, per alert, whether any of its codes is in the expanded set."""
    return [not wanted.isdisjoint(codes) for codes in alerts]


def scatter(alerts: list[list[str]], rng: np.random.Generator) -> list[list[str]]:
    """Return equal alerts whose codes are new str objects, created in shuffled order."""
    flat = [code for codes in alerts for code in codes]
    fresh = [""] * len(flat)
    for index in rng.permutation(len(flat)).tolist():
        code = flat[index]
        fresh[index] = code[:3] + code[3:]  # a new object, equal to the code
    bounds = np.cumsum([0] + [len(codes) for codes in alerts]).tolist()
    return [fresh[low:high] for low, high in zip(bounds, bounds[1:], strict=False)]


def make_workload(n_alerts: int, n_configured: int) -> Workload:
    """Build seeded alerts of 1..30 codes each and a configured set drawn from the same codes."""
    rng = np.random.default_rng(SEED)
    universe = code_universe()
    picks = rng.choice(len(universe) - 1, size=n_configured, replace=False) + 1  # not 000000
    configured = [universe[i] for i in picks.tolist()]
    lengths = rng.integers(1, MAX_CODES + 1, size=n_alerts)
    bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
    # tolist() on a numpy string array makes a new str per code, as parsing alerts does.
    picked = np.array(universe)[rng.integers(0, len(universe), size=bounds[-1])]
    flat_codes = picked.tolist()
    alerts = [flat_codes[low:high] for low, high in zip(bounds, bounds[1:], strict=False)]
    matcher = GeocodeMatcher(configured)
    flat, offsets = encode_geocode_lists(alerts)  # the form the alert store keeps
    scattered = scatter(alerts, rng)
    return Workload(alerts, scattered, flat, offsets, matcher, expand_for_python(configured))


@pytest.fixture(scope="module")
def workload(request: pytest.FixtureRequest) -> Workload:
    """Return the seeded workload after checking that ours and the peer agree on it."""
    disabled = bool(request.config.getoption("benchmark_disable", default=False))
    data = make_workload(*(SMALL_SIZE if disabled else FULL_SIZE))
    peer = python_set_loop(data.wanted, data.alerts)
    assert data.matcher.match_many(data.alerts).tolist() == peer
    assert data.matcher.match_encoded(data.flat, data.offsets).tolist() == peer
    assert data.scattered == data.alerts and data.scattered[0][0] is not data.alerts[0][0]
    assert python_set_loop(data.wanted, data.scattered) == peer
    assert data.matcher.match_many(data.scattered).tolist() == peer
    assert 0.05 < sum(peer) / len(peer) < 0.95  # both outcomes are common
    return data


def _label(benchmark: Any, group: str, role: str) -> None:
    """Tag a benchmark with its comparison group, its role and the peer's name."""
    benchmark.group = group
    benchmark.extra_info["role"] = role
    benchmark.extra_info["peer"] = PEER


def test_match_many_ours(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_many", "ours")
    result = benchmark(workload.matcher.match_many, workload.alerts)
    assert result.shape == (len(workload.alerts),)


def test_match_many_peer(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_many", "peer")
    result = benchmark(python_set_loop, workload.wanted, workload.alerts)
    assert len(result) == len(workload.alerts)


def test_match_many_scattered_ours(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_many.scattered", "ours")
    result = benchmark(workload.matcher.match_many, workload.scattered)
    assert result.shape == (len(workload.alerts),)


def test_match_many_scattered_peer(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_many.scattered", "peer")
    result = benchmark(python_set_loop, workload.wanted, workload.scattered)
    assert len(result) == len(workload.alerts)


def test_match_encoded_ours(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_encoded", "ours")
    result = benchmark(workload.matcher.match_encoded, workload.flat, workload.offsets)
    assert result.shape == (len(workload.alerts),)


def test_match_encoded_peer(benchmark: Any, workload: Workload) -> None:
    _label(benchmark, "alerts.match_encoded", "peer")
    result = benchmark(python_set_loop, workload.wanted, workload.alerts)
    assert len(result) == len(workload.alerts)


# --- a station-sized area against a national feed -------------------------------------------

STATION_ALERTS = 5_000
STATION_ALERTS_SMALL = 1_000
MAX_COUNTIES = 12


def station_codes() -> list[str]:
    """Return 59 configured codes in Ohio (39) and Pennsylvania (42), wildcards included."""
    codes = ["039000"]  # all of Ohio: a whole-state wildcard
    codes += [f"039{county:03d}" for county in range(1, 25, 2)]  # 12 whole counties
    codes += [f"OHZ{zone:03d}" for zone in range(3, 19, 2)]  # 8 UGC zones
    codes += [f"042{county:03d}" for county in range(1, 57, 2)]  # 28 whole counties
    codes += ["142103", "942105"]  # parts of two more counties
    codes += [f"PAZ{zone:03d}" for zone in range(20, 36, 2)]  # 8 UGC zones
    return codes


def national_feed(n_alerts: int, seed: int = SEED) -> list[list[str]]:
    """Return seeded alerts, each in one state or DC: 1..12 SAME counties and as many zones."""
    rng = np.random.default_rng(seed)
    states = sorted((postal, fips) for postal, fips in STATE_FIPS.items() if fips < 60)
    alerts = []
    for _ in range(n_alerts):
        postal, fips = states[int(rng.integers(len(states)))]
        count = int(rng.integers(1, MAX_COUNTIES + 1))
        counties = (rng.choice(100, size=count, replace=False) * 2 + 1).tolist()  # odd, as FIPS
        zones = rng.choice(np.arange(1, 151), size=count, replace=False).tolist()
        codes = [f"0{fips:02d}{county:03d}" for county in counties]
        codes += [f"{postal}Z{zone:03d}" for zone in zones]
        alerts.append(codes)
    return alerts


@dataclass(frozen=True)
class StationWorkload:
    """A national feed, the station's matcher and the peer's expanded set."""

    alerts: list[list[str]]
    flat: np.ndarray
    offsets: np.ndarray
    matcher: GeocodeMatcher
    wanted: frozenset[str]


@pytest.fixture(scope="module")
def station(request: pytest.FixtureRequest) -> StationWorkload:
    """Return the station workload after checking that ours and the peer agree on it."""
    disabled = bool(request.config.getoption("benchmark_disable", default=False))
    alerts = national_feed(STATION_ALERTS_SMALL if disabled else STATION_ALERTS)
    configured = station_codes()
    assert len(configured) == 59
    matcher = GeocodeMatcher(configured)
    flat, offsets = encode_geocode_lists(alerts)
    data = StationWorkload(alerts, flat, offsets, matcher, expand_for_python(configured))
    peer = python_set_loop(data.wanted, alerts)
    assert matcher.match_many(alerts).tolist() == peer
    assert matcher.match_encoded(flat, offsets).tolist() == peer
    assert 0.02 < sum(peer) / len(peer) < 0.06  # a few per cent of a national feed
    return data


def test_match_many_station_ours(benchmark: Any, station: StationWorkload) -> None:
    _label(benchmark, "alerts.match_many.station", "ours")
    result = benchmark(station.matcher.match_many, station.alerts)
    assert result.shape == (len(station.alerts),)


def test_match_many_station_peer(benchmark: Any, station: StationWorkload) -> None:
    _label(benchmark, "alerts.match_many.station", "peer")
    result = benchmark(python_set_loop, station.wanted, station.alerts)
    assert len(result) == len(station.alerts)


def test_match_encoded_station_ours(benchmark: Any, station: StationWorkload) -> None:
    _label(benchmark, "alerts.match_encoded.station", "ours")
    result = benchmark(station.matcher.match_encoded, station.flat, station.offsets)
    assert result.shape == (len(station.alerts),)


def test_match_encoded_station_peer(benchmark: Any, station: StationWorkload) -> None:
    _label(benchmark, "alerts.match_encoded.station", "peer")
    result = benchmark(python_set_loop, station.wanted, station.alerts)
    assert len(result) == len(station.alerts)
