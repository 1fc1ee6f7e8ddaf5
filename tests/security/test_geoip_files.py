"""Small real MaxMind DB files for the GeoIP tests, written with ``mmdb-writer`` (no tests here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mmdb_writer import MMDBWriter
from netaddr import IPSet

BUILD_EPOCH_MIN = 1_700_000_000  # the writer stamps the current time; it is after this


def _place(iso: str, country: str, region_code: str, region: str, city: str) -> dict[str, Any]:
    return {
        "country": {"iso_code": iso, "names": {"en": country}},
        "registered_country": {"iso_code": iso, "names": {"en": country}},
        "subdivisions": [{"iso_code": region_code, "names": {"en": region}}],
        "city": {"names": {"en": city}},
    }


CITY_NETWORKS: dict[str, dict[str, Any]] = {
    "8.8.8.0/24": _place("US", "United States", "CA", "California", "Mountain View"),
    "81.2.69.0/24": _place("GB", "United Kingdom", "ENG", "England", "London"),
    "2001:4860::/32": _place("US", "United States", "OH", "Ohio", "Cleveland"),
}
COUNTRY_NETWORKS: dict[str, dict[str, Any]] = {
    "8.8.8.0/24": {"country": {"iso_code": "US", "names": {"en": "United States"}}},
}
ASN_NETWORKS: dict[str, dict[str, Any]] = {
    "8.8.8.0/24": {"autonomous_system_number": 15169, "autonomous_system_organization": "Google"},
    "2001:4860::/32": {
        "autonomous_system_number": 15169,
        "autonomous_system_organization": "Google",
    },
}


def write_mmdb(path: Path, database_type: str, networks: dict[str, dict[str, Any]]) -> Path:
    """Write an IPv6 database (IPv4 mapped in) holding ``networks``; return its path."""
    writer = MMDBWriter(
        ip_version=6,
        ipv4_compatible=True,
        database_type=database_type,
        languages=["en"],
        description="alertstation test database",
    )
    for network, record in networks.items():
        writer.insert_network(IPSet([network]), record)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer.to_db_file(str(path))
    return path


def city_db(folder: Path) -> Path:
    """Write the test City database."""
    return write_mmdb(folder / "city.mmdb", "GeoIP2-City", CITY_NETWORKS)


def country_db(folder: Path) -> Path:
    """Write the test Country database."""
    return write_mmdb(folder / "country.mmdb", "GeoLite2-Country", COUNTRY_NETWORKS)


def asn_db(folder: Path) -> Path:
    """Write the test ASN database."""
    return write_mmdb(folder / "asn.mmdb", "GeoLite2-ASN", ASN_NETWORKS)
