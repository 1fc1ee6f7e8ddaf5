"""The alert feeds page (who sees what) and a feed body refused with every error at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from alertstation.alerts.poll.sources import SourceConfig, read_config
from alertstation.errors import FieldError, FieldErrors
from tests.support import StationHarness

SOURCES = "/admin/poller/sources"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"
NEW = (FIXTURES / "cap12_svr_new.xml").read_bytes()


def test_every_bad_field_of_a_feed_is_named_at_once() -> None:
    body = {"name": " ", "kind": "cap-xml", "url": "ftp://h/", "interval_seconds": 5, "x": 1}
    with pytest.raises(FieldErrors) as caught:
        read_config(body)
    fields = [(error.field, str(error)) for error in caught.value.errors]
    assert [field for field, _ in fields] == ["x", "name", "interval_seconds", "url"]
    assert fields[3][1] == "url must start with http:// or https://"
    answer = caught.value.as_app_error()
    assert (answer.status, answer.details["field"]) == (422, "x")
    assert answer.details["errors"][1] == {
        "field": "name",
        "message": "name must be a non-empty string",
    }


def test_one_bad_field_is_a_plain_field_error_and_an_edit_checks_only_what_it_sends() -> None:
    with pytest.raises(FieldError) as caught:
        read_config({"name": "Feed", "kind": "rss"})
    assert not isinstance(caught.value, FieldErrors) and caught.value.field == "kind"
    current = SourceConfig(name="Feed", kind="cap-xml", url="https://example.org/a.xml")
    with pytest.raises(FieldErrors) as both:
        read_config({"read_timeout": 0, "enabled": "yes"}, current)
    assert [error.field for error in both.value.errors] == ["read_timeout", "enabled"]


def test_the_feeds_page_offers_forms_only_to_those_who_may_change_feeds(
    station: StationHarness,
) -> None:
    assert station.client.simulate_get("/admin/poller").status_code == 401
    station.add_user("ops", "operator")
    operator = station.sign_in("ops")
    operator.request("POST", SOURCES, json={"name": "NWS", "kind": "json-api", "area": "OK"})
    page = operator.request("GET", "/admin/poller")
    assert page.status_code == 200
    assert 'id="feed-form"' in page.text and 'action="/admin/poller/sources"' in page.text
    assert 'id="import-form"' in page.text and 'enctype="multipart/form-data"' in page.text
    assert "NWS" in page.text and "No ETag" in page.text and "never" in page.text

    station.add_user("watcher", "viewer")
    viewer = station.sign_in("watcher")
    seen = viewer.request("GET", "/admin/poller")
    assert seen.status_code == 200 and "NWS" in seen.text
    assert 'id="feed-form"' not in seen.text and 'id="import-form"' not in seen.text
    assert 'id="feeds-readonly"' in seen.text
    refused = viewer.request("POST", SOURCES, json={"name": "x", "kind": "json-api"})
    assert refused.status_code == 403


def test_an_import_sent_without_script_comes_back_to_the_page_with_its_result(
    station: StationHarness,
) -> None:
    station.add_user("ops", "operator")
    operator = station.sign_in("ops")
    boundary = "feeds-page-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="svr.xml"\r\n'
            "Content-Type: application/xml\r\n\r\n"
        ).encode()
        + NEW
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Accept": "text/html"}
    sent = operator.request("POST", "/admin/import_alert", body=body, headers=headers)
    assert sent.status_code == 303
    assert sent.headers["location"] == "/admin/poller?imported=svr.xml&stored=1&skipped=0"
    page = operator.request("GET", sent.headers["location"], headers={"Accept": "text/html"})
    assert "Imported svr.xml: 1 alert(s) stored." in page.text
    headers["Accept"] = "application/json"
    again = operator.request("POST", "/admin/import_alert", body=body, headers=headers)
    assert again.status_code == 200 and again.json["alerts"][0]["outcome"] == "duplicate"
