"""apprise's own log records pass the station's redaction: no channel URL or part of one."""

from __future__ import annotations

import logging

import pytest

from alertstation.notifications.redaction import APPRISE_FILTER, redact

URL = "mailtos://duty:pa55-w0rd-x@smtp.example.org:587?to=ops@example.org"


def test_a_record_on_the_apprise_logger_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    APPRISE_FILTER.add(URL)
    caplog.set_level(logging.DEBUG, logger="apprise")
    logging.getLogger("apprise").warning("Failed to send to %s (user %s)", URL, "duty")
    logging.getLogger("apprise").info("Using password pa55-w0rd-x for smtp")
    text = caplog.text
    assert "pa55-w0rd-x" not in text and "smtp.example.org" not in text
    assert "Failed to send to [redacted]" in text and "[redacted] for smtp" in text


def test_any_url_in_a_reason_is_redacted_even_unknown_ones() -> None:
    reason = "Could not reach jsons://tok:abc@hooks.example.net/x/secret-path: timed out"
    assert redact(reason, set()) == "Could not reach jsons://[redacted] timed out"
