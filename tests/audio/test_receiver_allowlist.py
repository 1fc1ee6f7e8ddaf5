"""The receiver allowlist: only an admin sets it; its parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from alertstation.settings import (
    Settings,
    SettingsError,
    parse_receiver_allowlist,
    receiver_entry,
)
from tests.support import StationHarness

NAME = "ALERTSTATION_RECEIVER_ALLOWLIST"


def test_the_allowlist_reads_absolute_paths_in_order_without_repeats(tmp_path: Path) -> None:
    assert parse_receiver_allowlist(" /usr/bin/rtl_fm, ,/bin/cat,/usr/bin/rtl_fm") == (
        "/usr/bin/rtl_fm",
        "/bin/cat",
    )
    assert parse_receiver_allowlist("") == ()
    with pytest.raises(SettingsError, match="not an absolute program path"):
        parse_receiver_allowlist("/bin/cat,rtl_fm")
    settings = Settings.from_env({"ALERTSTATION_DATA_DIR": str(tmp_path), NAME: "/bin/cat"})
    assert settings.receiver_allowlist == ("/bin/cat",)


def test_an_entry_may_carry_the_arguments_its_program_must_run_with(tmp_path: Path) -> None:
    assert parse_receiver_allowlist("/opt/rx --band  noaa,/opt/rx 'a b',/opt/rx --band noaa") == (
        "/opt/rx --band noaa",
        "/opt/rx 'a b'",
    )
    assert receiver_entry("/opt/rx 'a b'") == ("/opt/rx", ("a b",))
    with pytest.raises(SettingsError, match="not quoted properly"):
        parse_receiver_allowlist("/opt/rx 'a b")
    with pytest.raises(SettingsError, match="not an absolute program path"):
        parse_receiver_allowlist("rx /opt/rx")


def test_the_preflight_concurrency_is_a_small_whole_number(tmp_path: Path) -> None:
    env = {"ALERTSTATION_DATA_DIR": str(tmp_path)}
    assert Settings.from_env(env).preflight_concurrency == 4
    name = "ALERTSTATION_PREFLIGHT_CONCURRENCY"
    assert Settings.from_env({**env, name: "2"}).preflight_concurrency == 2
    for bad in ("0", "65", "two", "-1"):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env({**env, name: bad})


def test_only_an_admin_may_change_the_allowlist(station: StationHarness) -> None:
    station.add_user("ops", "operator")
    station.add_user("boss", "admin")
    ops, admin = station.sign_in("ops"), station.sign_in("boss")
    body = {"variables": {NAME: "/bin/sh"}}
    refused = ops.request("PUT", "/api/environment/variables", json=body)
    assert refused.status_code == 403, refused.text
    assert refused.json["error"]["code"] == "admin_only_variable"
    bad = admin.request("PUT", "/api/environment/variables", json={"variables": {NAME: "sh"}})
    assert bad.status_code == 422, bad.text
    saved = admin.request(
        "PUT", "/api/environment/variables", json={"variables": {NAME: "/usr/bin/rtl_fm"}}
    )
    assert saved.status_code == 200, saved.text
