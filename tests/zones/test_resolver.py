"""Choosing the DBF of each family: explicit path, WX_ZONE_DBF_PATH, newest file in assets."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from alertstation.zones.resolver import date_stamp, newest, resolve_dbf_paths
from tests.zones.zonefiles import MARINE, copy_shared, require_shared_data


def touch(folder: Path, *names: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in names]
    for path in paths:
        path.write_bytes(b"")
    return paths


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("z_18mr25.dbf", date(2025, 3, 18)),
        ("mz20fe25.dbf", date(2025, 2, 20)),
        ("cs16ap26.dbf", date(2026, 4, 16)),
        ("fz_05de24.DBF", date(2024, 12, 5)),
        ("z_03ja25", date(2025, 1, 3)),
        ("z_01my25.dbf", date(2025, 5, 1)),
        ("z_30jn25.dbf", date(2025, 6, 30)),
        ("z_04jl25.dbf", date(2025, 7, 4)),
        ("z_09au25.dbf", date(2025, 8, 9)),
        ("z_10se25.dbf", date(2025, 9, 10)),
        ("z_11oc25.dbf", date(2025, 10, 11)),
        ("z_12no25.dbf", date(2025, 11, 12)),
        ("z_18xx25.dbf", None),
        ("z_31fe25.dbf", None),
        ("z_custom.dbf", None),
    ],
)
def test_date_stamps(name: str, expected: date | None) -> None:
    assert date_stamp(name) == expected


def test_date_order_beats_name_order(tmp_path: Path) -> None:
    files = touch(tmp_path, "z_03ja25.dbf", "z_18mr25.dbf", "z_05de24.dbf")
    assert newest(files) == tmp_path / "z_18mr25.dbf"
    by_date = sorted(files, key=lambda p: date_stamp(p.name) or date.min)
    assert [p.name for p in by_date] == ["z_05de24.dbf", "z_03ja25.dbf", "z_18mr25.dbf"]
    assert sorted(p.name for p in files) != [p.name for p in by_date]
    # Name order would keep z_18mr25; the January 2026 file is newer.
    (later,) = touch(tmp_path, "z_03ja26.dbf")
    assert resolve_dbf_paths(tmp_path)["public"] == later


def test_each_family_from_its_prefix(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "z_18mr25.dbf",
        "mz20fe25.dbf",
        "fz_05mr25.dbf",
        "cs16ap26.dbf",
        "c_05mr24.dbf",  # the county shapefile: not a family
        "z_19mr25.shp",
        "notes.txt",
    )
    assert resolve_dbf_paths(tmp_path) == {
        "public": tmp_path / "z_18mr25.dbf",
        "marine": tmp_path / "mz20fe25.dbf",
        "fire": tmp_path / "fz_05mr25.dbf",
        "partial": tmp_path / "cs16ap26.dbf",
    }


def test_coastal_marine_file_beats_a_newer_offshore_one(tmp_path: Path) -> None:
    touch(tmp_path, "mz20fe25.dbf", "oz_01ja26.dbf")
    assert resolve_dbf_paths(tmp_path)["marine"] == tmp_path / "mz20fe25.dbf"
    (tmp_path / "mz20fe25.dbf").unlink()
    assert resolve_dbf_paths(tmp_path)["marine"] == tmp_path / "oz_01ja26.dbf"


def test_unstamped_names_fall_back_to_name_order(tmp_path: Path) -> None:
    touch(tmp_path, "z_alpha.dbf", "z_custom.dbf")
    assert resolve_dbf_paths(tmp_path)["public"] == tmp_path / "z_custom.dbf"
    touch(tmp_path, "z_05de24.dbf")
    assert resolve_dbf_paths(tmp_path)["public"] == tmp_path / "z_05de24.dbf", "stamped wins"


def test_explicit_beats_env_beats_assets(tmp_path: Path) -> None:
    assets = tmp_path / "assets"
    touch(assets, "z_18mr25.dbf", "mz20fe25.dbf")
    env_file, explicit_file = touch(tmp_path / "elsewhere", "z_01ja24.dbf", "z_02ja24.dbf")
    assert resolve_dbf_paths(assets)["public"] == assets / "z_18mr25.dbf"
    with_env = resolve_dbf_paths(assets, env_path=env_file)
    assert with_env == {"public": env_file, "marine": assets / "mz20fe25.dbf"}
    with_both = resolve_dbf_paths(assets, explicit=explicit_file, env_path=env_file)
    assert with_both == {"public": explicit_file, "marine": assets / "mz20fe25.dbf"}


def test_explicit_forms(tmp_path: Path) -> None:
    assets = tmp_path / "assets"
    touch(assets, "z_18mr25.dbf")
    marine, fire = touch(tmp_path / "x", "mz21fe25.dbf", "fz_18mr25.dbf")
    assert resolve_dbf_paths(assets, explicit=str(marine))["marine"] == marine
    assert resolve_dbf_paths(assets, explicit=[marine, fire]) == {
        "public": assets / "z_18mr25.dbf",
        "marine": marine,
        "fire": fire,
    }
    assert resolve_dbf_paths(assets, explicit={"fire": fire})["fire"] == fire
    with pytest.raises(ValueError, match="unknown zone family offshore"):
        resolve_dbf_paths(assets, explicit={"offshore": marine})
    with pytest.raises(ValueError, match="two marine files"):
        resolve_dbf_paths(assets, explicit=[marine, tmp_path / "x" / "mz01ja25.dbf"])


def test_a_name_without_a_prefix_is_decided_by_its_columns(tmp_path: Path) -> None:
    require_shared_data()
    coastal = copy_shared(MARINE, tmp_path / "coastal-waters.dbf")
    assert resolve_dbf_paths(tmp_path / "none", env_path=coastal) == {"marine": coastal}


def test_missing_assets_directory_resolves_nothing(tmp_path: Path) -> None:
    assert resolve_dbf_paths(tmp_path / "missing") == {}


def test_default_assets_directory_comes_from_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touch(tmp_path / "assets", "z_18mr25.dbf")
    monkeypatch.setenv("ALERTSTATION_ASSETS_DIR", str(tmp_path / "assets"))
    monkeypatch.setenv("ALERTSTATION_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir(exist_ok=True)  # an existing station's
    assert resolve_dbf_paths() == {"public": tmp_path / "assets" / "z_18mr25.dbf"}
