"""The receiver allowlist: only an admin sets it; its parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from alertstation.settings import Settings, SettingsError, parse_receiver_allowlist
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
