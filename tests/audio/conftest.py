"""Fixtures of the audio tests: the app with a receiver allowlist, a loopback stream server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pytest
from sqlalchemy import Engine

from alertstation.app import create_app
from tests.alerts.feed_server import FeedServer, running_server
from tests.audio.writers import SINE_ENTRY
from tests.support import Clock, StationHarness, clear_tables, make_settings

#: The programs the test station's receivers may run: the sine writer, and cat and the
#: interpreter without arguments.
ALLOWED_PROGRAMS = (SINE_ENTRY, sys.executable, "/bin/cat")


@pytest.fixture
def audio_station(tmp_path: Path, engine: Engine) -> Iterator[StationHarness]:
    """The real app whose admin allowlisted the Python interpreter and cat for receivers."""
    clock = Clock()
    settings = make_settings(
        tmp_path,
        engine.url.render_as_string(hide_password=False),
        receiver_allowlist=ALLOWED_PROGRAMS,
    )
    app = create_app(settings, engine=engine, clock=clock)
    try:
        yield StationHarness(app, falcon.testing.TestClient(app), clock, engine)
    finally:
        clear_tables(engine)


@pytest.fixture
def stream_server() -> Iterator[FeedServer]:
    """A loopback HTTP server answering scripted responses (streams, playlists, errors)."""
    with running_server() as server:
        yield server
