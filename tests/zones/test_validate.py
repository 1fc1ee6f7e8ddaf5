"""Zone code validation and the known/unknown split against the catalog."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine

from alertstation.zones import split_known, validate_zone_codes
from alertstation.zones.catalog import ZoneCatalog
from alertstation.zones.loader import load_dbf
from alertstation.zones.service import apply_files, sync_catalog
from alertstation.zones.validate import normalise_zone_code
from tests.support import clear_tables
from tests.zones.zonefiles import LAND, require_shared_data


@pytest.mark.parametrize(
    ("token", "code"),
    [
        ("txz001", "TXZ001"),
        ("TX001", "TXZ001"),
        ("tx-001", "TXZ001"),
        (" TX Z 0-01 ", "TXZ001"),
        ("GMZ155", "GMZ155"),
        ("TXC001", "TXC001"),
        ("-", ""),
    ],
)
def test_normalise(token: str, code: str) -> None:
    assert normalise_zone_code(token) == code


def test_text_is_split_on_commas_whitespace_and_newlines() -> None:
    text = "txz001, TX-002\n\tGMZ155,,TXZ001  ohio 12345\r\nAMZ-250, TXC003 TX0001"
    valid, invalid = validate_zone_codes(text)
    assert valid == ["TXZ001", "TXZ002", "GMZ155", "AMZ250"]
    assert invalid == ["ohio", "12345", "TXC003", "TX0001"]


def test_items_of_an_iterable_are_single_tokens() -> None:
    valid, invalid = validate_zone_codes(["tx 001", "TX-001", "pz z 850", "bad one", "", "bad one"])
    assert valid == ["TXZ001", "PZZ850"]
    assert invalid == ["bad one"]


def test_empty_input() -> None:
    assert validate_zone_codes("") == ([], [])
    assert validate_zone_codes(" , \n") == ([], [])
    assert validate_zone_codes([]) == ([], [])


@pytest.fixture
def land_loaded(engine: Engine) -> Iterator[Engine]:
    require_shared_data()
    apply_files(engine, {"public": LAND})
    yield engine
    clear_tables(engine)


def test_split_known_keeps_unknown_codes_in_order(land_loaded: Engine) -> None:
    valid, _ = validate_zone_codes("GMZ155 ALZ019 XXZ123 TXZ001 PHZ113")
    expected = (["ALZ019", "TXZ001"], ["GMZ155", "XXZ123", "PHZ113"])
    with land_loaded.connect() as conn:
        assert split_known(conn, valid) == expected
    assert split_known(ZoneCatalog(land_loaded), valid) == expected


def test_split_known_in_an_open_transaction_and_in_chunks(conn: Connection) -> None:
    require_shared_data()
    land = load_dbf(LAND)
    sync_catalog(conn, {"public": land})
    codes = list(dict.fromkeys(r.zone_code for r in land)) + [f"ZZZ{n:03d}" for n in range(700)]
    known, unknown = split_known(conn, codes)
    assert len(known) == 4026 and len(unknown) == 700
    assert known[0] == land[0].zone_code and unknown[-1] == "ZZZ699"
