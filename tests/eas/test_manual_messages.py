"""The aired-message archive (resend, delete, purge), one-step generation and the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from alertstation.audit.tables import audit_logs
from alertstation.eas.archive import wav_file
from alertstation.eas.audio import decode_wav
from alertstation.eas.tables import eas_activations, eas_archive
from alertstation.same import SameHeader
from tests.eas.test_manual import RWT, multipart, tone_wav
from tests.support import SignedIn, StationHarness


@pytest.fixture
def operator(station: StationHarness) -> SignedIn:
    station.add_user("ops", "operator")
    return station.sign_in("ops")


def aired(client: SignedIn, **overrides: Any) -> dict[str, Any]:
    result = client.request(
        "POST", "/admin/eas/manual_generate", json={**RWT, "archive_only": True, **overrides}
    )
    assert result.status_code == 201, result.text
    return result.json["message"]


def actions(station: StationHarness) -> list[str]:
    with station.engine.connect() as conn:
        return list(conn.execute(select(audit_logs.c.action).order_by(audit_logs.c.id)).scalars())


def test_admin_generate_creates_and_airs(station: StationHarness, operator: SignedIn) -> None:
    message = aired(operator)
    with station.engine.connect() as conn:
        activation = conn.execute(select(eas_activations)).one()
    assert activation.state == "sent" and message["activation_id"] == activation.id
    assert actions(station).count("eas.broadcast") == 1
    listed = operator.request("GET", "/messages").json["messages"]
    assert [item["id"] for item in listed] == [message["id"]]


def test_admin_generate_takes_a_wav(operator: SignedIn) -> None:
    body, headers = multipart({**RWT, "archive_only": "true"}, tone_wav())
    result = operator.request("POST", "/admin/eas/manual_generate", body=body, headers=headers)
    assert result.status_code == 201, result.text


def test_manual_generate_returns_audio_and_stores_nothing(
    station: StationHarness, operator: SignedIn, tmp_path: Path
) -> None:
    result = operator.request("POST", "/manual/generate", json={**RWT, "archive_only": True})
    assert result.status_code == 200, result.text
    assert result.headers["content-type"] == "audio/wav"
    assert decode_wav(result.content).sample_rate == 22050
    with station.engine.connect() as conn:
        assert conn.execute(select(eas_activations)).first() is None
        assert conn.execute(select(eas_archive)).first() is None
    assert actions(station).count("eas.broadcast") == 0
    bad = operator.request(
        "POST", "/manual/generate", json={**RWT, "event": "ZZZ", "archive_only": True}
    )
    assert bad.status_code == 422


def test_resend_airs_a_copy(station: StationHarness, operator: SignedIn, tmp_path: Path) -> None:
    first = aired(operator)
    station.clock.advance(minutes=5)
    result = operator.request(
        "POST", f"/messages/{first['id']}/resend", json={"archive_only": True}
    )
    assert result.status_code == 200, result.text
    again = result.json["message"]
    assert again["id"] != first["id"] and again["header"] == first["header"]
    assert again["wav"] != first["wav"]
    folder = tmp_path / "data" / "eas-archive"
    assert (folder / again["wav"]).read_bytes() == (folder / first["wav"]).read_bytes()
    assert actions(station).count("eas.broadcast") == 2
    assert operator.request("POST", "/messages/999/resend").status_code == 404


def test_delete_one_message(station: StationHarness, operator: SignedIn, tmp_path: Path) -> None:
    keep, gone = aired(operator), aired(operator, event="RMT")
    folder = tmp_path / "data" / "eas-archive"
    result = operator.request("POST", f"/messages/{gone['id']}/delete")
    assert result.status_code == 200 and result.json["deleted"] == [gone["id"]]
    assert not (folder / gone["wav"]).exists()
    assert not (folder / gone["wav"]).with_suffix(".json").exists()
    assert (folder / keep["wav"]).exists()
    assert operator.request("GET", gone["audio_url"]).status_code == 404
    assert operator.request("POST", f"/messages/{gone['id']}/delete").status_code == 404
    assert actions(station).count("alert.deleted") == 1


def test_purge_messages(station: StationHarness, operator: SignedIn) -> None:
    aired(operator)
    aired(operator)
    result = operator.request("POST", "/messages/purge", json={"all": True})
    assert len(result.json["deleted"]) == 2
    assert operator.request("GET", "/messages").json["messages"] == []
    assert operator.request("POST", "/messages/purge", json={"ids": "x"}).status_code == 422
    assert operator.request("POST", "/messages/purge", body="x").status_code == 415


def test_message_purge_fails_closed(
    station: StationHarness, operator: SignedIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = aired(operator)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("ledger is down")

    monkeypatch.setattr(station.app.station.ledger, "record", broken)
    for path, body in (
        ("/messages/purge", {"all": True}),
        (f"/messages/{message['id']}/delete", None),
    ):
        result = operator.request("POST", path, json=body)
        assert result.status_code == 500 and result.json["error"]["code"] == "audit_failed"
    assert operator.request("GET", message["audio_url"]).status_code == 200


def test_page_shows_activations_and_archive(station: StationHarness, operator: SignedIn) -> None:
    draft = operator.request("POST", "/eas/manual/events", json=RWT).json["activation"]
    message = aired(operator, event="RMT")
    page = operator.request("GET", "/eas/manual")
    assert page.status_code == 200
    html = page.text
    assert 'href="/eas/manual"' in html  # the navigation entry
    assert f'src="{draft["audio_url"]}"' in html
    assert message["header"] in html
    assert "eas-manual.js" in html and "<script>" not in html
    SameHeader.parse(message["header"])


def test_empty_page(operator: SignedIn) -> None:
    html = operator.request("GET", "/eas/manual").text
    assert 'id="eas-no-activations"' in html and 'id="eas-no-messages"' in html


def test_archive_names_stay_inside_the_archive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        wav_file(tmp_path, "../secret.wav")
    assert wav_file(tmp_path, "a.wav").name == "a.wav"
