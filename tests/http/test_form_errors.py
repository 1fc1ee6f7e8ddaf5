"""Form errors in words for a re-rendered page (the server half of the form-error mechanism)."""

from __future__ import annotations

from alertstation.errors import FieldError, FieldErrors, Invalid
from alertstation.http.form_errors import NO_FIELD, field_messages, in_words


def test_a_leading_field_name_becomes_the_label() -> None:
    assert in_words("zone_codes: not codes: x", "zone_codes", "Zone codes") == (
        "Zone codes: not codes: x"
    )
    assert in_words("url must start with http://", "url", "Feed address") == (
        "Feed address must start with http://"
    )
    assert in_words("interval seconds must be", "interval_seconds", "Poll every") == (
        "Poll every must be"
    )
    assert in_words("urls are fine", "url", "Feed address") == "urls are fine"


def test_every_field_gets_its_message_and_unknown_fields_go_to_the_summary() -> None:
    several = FieldErrors(
        [FieldError("url", "url has no host"), FieldError("x", "unknown field x")]
    ).as_app_error()
    assert field_messages(several, {"url": "Feed address"}) == {
        "url": "Feed address has no host",
        NO_FIELD: "unknown field x",
    }
    one = Invalid("zone_codes: not codes: bogus", field="zone_codes")
    assert field_messages(one, {"zone_codes": "Zone codes"}) == {
        "zone_codes": "Zone codes: not codes: bogus"
    }
    assert field_messages(Invalid("nothing to save"), {"a": "A"}) == {NO_FIELD: "nothing to save"}
