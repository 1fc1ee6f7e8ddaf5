"""The alert feeds page (who sees what) and a feed body refused with every error at once."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

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


def test_a_feed_is_edited_without_script_and_a_refused_form_comes_back_marked(
    station: StationHarness,
) -> None:
    station.add_user("ops", "operator")
    operator = station.sign_in("ops")
    secret_url = "https://reader:s3cret-pass@127.0.0.1:9/alerts.xml"
    made = operator.request(
        "POST", SOURCES, json={"name": "County", "kind": "cap-xml", "url": secret_url}
    )
    feed_id = made.json["id"]
    html = {"Accept": "text/html"}
    page = operator.request("GET", "/admin/poller", headers=html)
    assert f'href="/admin/poller?edit={feed_id}#feed-form-heading"' in page.text
    # The Edit link opens the form on the feed, posting to the feed's own address.
    opened = operator.request("GET", f"/admin/poller?edit={feed_id}", headers=html)
    assert f'action="/admin/poller/sources/{feed_id}"' in opened.text
    assert 'value="County"' in opened.text and "s3cret-pass" not in opened.text
    shown_url = made.json["url"]

    def send(fields: dict[str, str]) -> object:
        form = {"csrf_token": operator.csrf, "kind": "cap-xml", "url": shown_url, **fields}
        return operator.request(
            "POST",
            f"{SOURCES}/{feed_id}",
            csrf=False,  # the form's own field carries the token
            body=urlencode(form),
            headers={**html, "Content-Type": "application/x-www-form-urlencoded"},
        )

    refused = send({"name": "", "interval_seconds": "5", "read_timeout": "15"})
    assert refused.status_code == 422
    assert 'id="feed-name" name="name"' in refused.text
    assert 'aria-invalid="true" aria-describedby="feed-name-error"' in refused.text
    assert 'id="feed-interval-error"' in refused.text and "Poll every (seconds) must" in (
        refused.text
    )
    assert 'value="5"' in refused.text, "what was sent is shown again"

    saved = send({"name": "County EM", "interval_seconds": "120", "read_timeout": "20"})
    assert saved.status_code == 303
    assert saved.headers["location"].startswith("/admin/poller?saved=County+EM")
    after = operator.request("GET", f"{SOURCES}", headers={"Accept": "application/json"})
    (feed,) = after.json["sources"]
    assert (feed["name"], feed["interval_seconds"], feed["read_timeout"]) == ("County EM", 120, 20)
    assert feed["enabled"] is False, "an unticked box disables the feed"
    assert feed["url_has_credentials"], "the address left as shown keeps its stored sign-in"
    back = operator.request("GET", saved.headers["location"], headers=html)
    assert "Saved the feed County" in back.text
    # Without the form's token the change is refused.
    forged = operator.request(
        "POST",
        f"{SOURCES}/{feed_id}",
        csrf=False,
        body=urlencode({"name": "Forged", "kind": "cap-xml"}),
        headers={**html, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert forged.status_code == 403
